// SPDX-License-Identifier: MIT
/*
 * Workload for demangling (tests/integration/names.sh): CPU time spread over
 * C++ functions whose symbols are mangled in each way a name can be: a
 * member of a class template in a namespace, two overloads, an operator and
 * a lambda. Built at -O0 with frame pointers (Makefile) so none is inlined.
 * Demangled, the leaves are
 *   names::Acc<long>::spin(long)
 *   names::work(int)          names::work(double)
 *   names::operator+(names::Vec const&, names::Vec const&)
 *   main::{lambda(int)#1}::operator()(int) const
 * usage: cxxnames [SECONDS]   (wall time, default 30)
 */
#include <cstdlib>
#include <ctime>

static volatile unsigned long sink;

namespace names {

template <typename T> struct Acc {
	T total;
	T spin(T n)
	{
		for (T i = 0; i < n; i++)
			total = total * 6364136223846793005L + 1442695040888963407L;
		return total;
	}
};

unsigned long work(int n)
{
	unsigned long x = sink;

	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1;
	return x;
}

unsigned long work(double n)
{
	unsigned long x = sink;

	for (double i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 3;
	return x;
}

struct Vec {
	unsigned long a, b;
};

Vec operator+(const Vec &l, const Vec &r)
{
	Vec v = l;

	for (unsigned long i = 0; i < r.a; i++)
		v.b = v.b * 6364136223846793005UL + 5;
	return v;
}

} // namespace names

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30;
	time_t end = time(NULL) + (time_t)seconds;
	names::Acc<long> acc = { 1 };
	auto lambda = [](int n) {
		unsigned long x = sink;

		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 7;
		return x;
	};

	while (time(NULL) < end) {
		names::Vec v = { 100000, 1 }, w = { 100000, 2 };

		sink = (unsigned long)acc.spin(100000);
		sink = names::work(100000);
		sink = names::work(100000.0);
		sink = (v + w).b;
		sink = lambda(100000);
	}
	return 0;
}
