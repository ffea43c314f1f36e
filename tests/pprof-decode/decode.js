#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Independent pprof reader for the integration tests: gunzips FILE (gzip is
// optional, as for pprof's profile.Parse), decodes it with npm's pprof-format
// (installed into ./node_modules by tests/integration/outputs.sh) and prints
// one JSON object: sample types, period, sample count and value totals,
// function names, mappings, label values, and samples per comm and per leaf
// function, so a shell test can assert on them with node -e or grep.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { Profile } = require(path.join(__dirname, 'node_modules', 'pprof-format'));

if (process.argv.length !== 3) {
	process.stderr.write('usage: decode.js FILE\n');
	process.exit(2);
}
let data = fs.readFileSync(process.argv[2]);
if (data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b)
	data = zlib.gunzipSync(data);
const prof = Profile.decode(data);
const strs = prof.stringTable.strings;
const str = (i) => {
	const n = Number(i);
	if (!Number.isInteger(n) || n < 0 || n >= strs.length)
		throw new Error(`string index ${i} outside the table of ${strs.length}`);
	return strs[n];
};
const num = (v) => Number(v);

if (strs[0] !== '')
	throw new Error('string_table[0] is not ""');
const funcs = new Map(prof.function.map((f) => [num(f.id), f]));
const locs = new Map(prof.location.map((l) => [num(l.id), l]));
const maps = new Map(prof.mapping.map((m) => [num(m.id), m]));
for (const l of prof.location) {
	if (num(l.mappingId) && !maps.has(num(l.mappingId)))
		throw new Error(`location ${l.id}: no mapping ${l.mappingId}`);
	for (const ln of l.line)
		if (!funcs.has(num(ln.functionId)))
			throw new Error(`location ${l.id}: no function ${ln.functionId}`);
}

const totals = prof.sampleType.map(() => 0);
const labels = {};
const byComm = {};
const byLeaf = {};
for (const s of prof.sample) {
	if (s.value.length !== prof.sampleType.length)
		throw new Error(`sample with ${s.value.length} values for ${prof.sampleType.length} types`);
	s.value.forEach((v, i) => { totals[i] += num(v); });
	let comm = null;
	for (const lb of s.label) {
		const key = str(lb.key);
		const val = num(lb.str) ? str(lb.str) : num(lb.num);
		(labels[key] = labels[key] || new Set()).add(val);
		if (key === 'comm')
			comm = val;
	}
	byComm[comm] = (byComm[comm] || 0) + num(s.value[0]);
	if (!s.locationId.length)
		continue;
	const leaf = locs.get(num(s.locationId[0]));
	if (!leaf)
		throw new Error(`sample: no location ${s.locationId[0]}`);
	const name = leaf.line.length ? str(funcs.get(num(leaf.line[0].functionId)).name)
		: '0x' + BigInt(leaf.address).toString(16);
	byLeaf[name] = (byLeaf[name] || 0) + num(s.value[0]);
}

const out = {
	sampleTypes: prof.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`),
	periodType: prof.periodType ? `${str(prof.periodType.type)}/${str(prof.periodType.unit)}` : null,
	period: num(prof.period),
	durationNanos: num(prof.durationNanos),
	timeNanos: String(prof.timeNanos),
	sampleCount: prof.sample.length,
	totals,
	functions: [...new Set(prof.function.map((f) => str(f.name)))].sort(),
	mappings: prof.mapping.map((m) => ({
		filename: str(m.filename), buildId: str(m.buildId), hasFunctions: !!m.hasFunctions,
	})),
	labels: Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, [...v].sort()])),
	byComm,
	byLeaf,
};
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
