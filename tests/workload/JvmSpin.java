// SPDX-License-Identifier: MIT
// A JVM for tests/integration/jvm.sh: one worker thread spinning through a
// known call chain (outer -> middle -> hot) for the given seconds, so that
// bpfprof -p finds a live HotSpot with its code cache in use.
public class JvmSpin {
	static volatile long sink;

	static long hot(long x) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long middle(long x) {
		return hot(x) ^ (x >>> 7);
	}

	static long outer(long x) {
		return middle(x + 1);
	}

	public static void main(String[] args) throws Exception {
		long end = System.nanoTime() + Long.parseLong(args.length > 0 ? args[0] : "10") * 1000000000L;
		Thread t = new Thread(() -> {
			long x = 1;
			while (System.nanoTime() < end)
				x = outer(x);
			sink = x;
		}, "spin");
		t.start();
		System.out.println("ready");
		t.join();
	}
}
