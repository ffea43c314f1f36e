// SPDX-License-Identifier: MIT
// JIT test workload: hotA and hotB have the same body, and hotA is called
// three times for each call of hotB, so hotA holds 75 % of the JIT samples
// and hotB 25 %. usage: node [--perf-prof | --perf-basic-prof] hot.js SECONDS
function hotA(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s * 31 + i) | 0; } return s; }
function hotB(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s * 31 + i) | 0; } return s; }
const end = Date.now() + 1000 * Number(process.argv[2] || 3);
let t = 0;
while (Date.now() < end) {
	t += hotA(300000);
	t += hotA(300000);
	t += hotA(300000);
	t += hotB(300000);
}
if (t === 0.5) console.log(t); // keep t alive
