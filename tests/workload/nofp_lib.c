// SPDX-License-Identifier: MIT
/*
 * The shared library of tests/workload/nofp.c: lib_hot is reached through
 * the PLT, so that a walk must step through a PLT entry's CFI, and runs in
 * code of another file with its own unwind table. Built -O2
 * -fomit-frame-pointer like the rest.
 */
volatile unsigned long nofp_lib_sink;

__attribute__((noinline)) unsigned long lib_hot(unsigned long n)
{
	unsigned long x = n;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	nofp_lib_sink = x;
	return x;
}
