// SPDX-License-Identifier: MIT
// JIT test workload: hotA and hotB have the same body, and hotA is called
// three times for each call of hotB, so hotA holds 75 % of the JIT samples
// and hotB 25 %. usage: node [--perf-prof | --perf-basic-prof] hot.js SECONDS [cpu]
// (cpu: SECONDS of the process's CPU time rather than wall time, so that a
// profile of it holds about the same samples however loaded the machine is)
function hotA(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s * 31 + i) | 0; } return s; }
function hotB(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s * 31 + i) | 0; } return s; }
const secs = Number(process.argv[2] || 3);
const cpu = process.argv[3] === 'cpu';
const end = Date.now() + 1000 * secs;
const used = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
let t = 0;
while (cpu ? used() < secs : Date.now() < end) {
	t += hotA(300000);
	t += hotA(300000);
	t += hotA(300000);
	t += hotB(300000);
}
if (t === 0.5) console.log(t); // keep t alive
