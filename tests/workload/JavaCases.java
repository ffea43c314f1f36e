// SPDX-License-Identifier: MIT
// A JVM for tests/integration/jvm.sh's harder Java frames, one thread each,
// for the given seconds: two overloads of one method (work(int),
// work(long)), a static nested class (Inner.spin), a recursion deeper than
// bpfprof's default --max-stack (down, 400 deep, spinning at the bottom),
// and a native method calling back into Java (Method.invoke, whose native
// accessor JDK 17 keeps with -Dsun.reflect.inflationThreshold large:
// NativeMethodAccessorImpl.invoke0 -> JVM_InvokeMethod -> the call stub ->
// reflected()); and a thread blocked in Thread.sleep under sleepy() (off-CPU).
import java.lang.reflect.Method;

public class JavaCases {
	static volatile long sink;
	static volatile boolean stop;

	static long work(int n) {
		long x = n;
		for (int i = 0; i < 3000; i++)
			x = x * 31 + i;
		return x;
	}

	static long work(long n) {
		long x = n;
		for (int i = 0; i < 3000; i++)
			x = x * 37 + i;
		return x;
	}

	static class Inner {
		static long spin(long x) {
			for (int i = 0; i < 5000; i++)
				x = x * 6364136223846793005L + i;
			return x;
		}
	}

	static long bottom(long x) {
		for (int i = 0; i < 100000 && !stop; i++)
			x = x * 2862933555777941757L + i;
		return x;
	}

	static long down(int n, long x) {
		return n == 0 ? bottom(x) : down(n - 1, x + 1) + 1;
	}

	public static long reflected() {
		long x = 7;
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005L + i;
		return x;
	}

	static void sleepy() {
		try {
			Thread.sleep(20);
		} catch (InterruptedException e) {
			stop = true;
		}
	}

	static Thread loop(String name, Runnable r) {
		Thread t = new Thread(() -> {
			while (!stop)
				r.run();
		}, name);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		long secs = Long.parseLong(args.length > 0 ? args[0] : "10");
		Method m = JavaCases.class.getMethod("reflected");
		Thread[] ts = {
			loop("overload", () -> sink += work(3) + work(4L)),
			loop("nested", () -> sink += Inner.spin(sink)),
			loop("deep", () -> sink += down(400, 1)),
			loop("sleeper", JavaCases::sleepy),
			loop("reflect", () -> {
				try {
					sink += (Long)m.invoke(null);
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
			}),
		};
		System.out.println("ready");
		Thread.sleep(secs * 1000);
		stop = true;
		for (Thread t : ts)
			t.join();
	}
}
