// SPDX-License-Identifier: MIT
// A JVM for tests/integration/jvm.sh's Java-frame checks: two worker
// threads, each down a known call chain to hot methods with known shares
// (worker-a: outerA -> midA -> leafA (2/3) and leafB (1/3); worker-b:
// outerB -> leafB), so that samples show whole stacks from the thread's root,
// in order, with lines (each hot loop's lines are marked LEAF-A / LEAF-B).
// After a moment the main thread prints the JVM's own view of worker-a
// (Thread.getStackTrace) as "trace Class.method File:line" lines.
public class JavaChain {
	static volatile long sink;
	static volatile boolean stop;

	static long leafA(int n) {
		long x = n;
		for (int i = 0; i < n; i++) // LEAF-A
			x = x * 6364136223846793005L + (x >>> 13) + i; // LEAF-A
		return x;
	}

	static long leafB(int n) {
		long x = n;
		for (int i = 0; i < n; i++) // LEAF-B
			x = x * 2862933555777941757L + (x >>> 11) + i; // LEAF-B
		return x;
	}

	static long midA(int n) {
		return leafA(2 * n) ^ leafB(n);
	}

	static long outerA(int n) {
		return midA(n) + 1;
	}

	static long outerB(int n) {
		return leafB(n) - 1;
	}

	public static void main(String[] args) throws Exception {
		long secs = Long.parseLong(args.length > 0 ? args[0] : "10");
		Thread a = new Thread(() -> {
			long s = 0;
			while (!stop)
				s += outerA(20000);
			sink = s;
		}, "worker-a");
		Thread b = new Thread(() -> {
			long s = 0;
			while (!stop)
				s += outerB(20000);
			sink = s;
		}, "worker-b");
		a.start();
		b.start();
		System.out.println("ready");
		Thread.sleep(1000);
		for (StackTraceElement e : a.getStackTrace())
			System.out.println("trace " + e.getClassName() + "." + e.getMethodName() + " " +
					   e.getFileName() + ":" + e.getLineNumber());
		System.out.flush();
		Thread.sleep(secs * 1000);
		stop = true;
		a.join();
		b.join();
	}
}
