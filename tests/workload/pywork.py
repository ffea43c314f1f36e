# SPDX-License-Identifier: MIT
# Python workload of known functions, shares and callers for
# tests/integration/python.sh, runnable by CPython 3.8 to 3.13:
#   python3 pywork.py READY_FILE mix    every kind of frame, in one loop:
#     Worker.step -> hot_a (3 units) and caller_b -> hot_b (1 unit): hot_a
#     is 75 % of the two; gen_values (a generator), keyfn (called back by
#     sorted() in C), recurse (150 deep, then leaf_work), größe (non-ASCII),
#     coro_work (an asyncio task), and a thread, compress_loop, in
#     zlib.compress (C code with the GIL released) all the time
#   python3 pywork.py READY_FILE sleep  napper in time.sleep (off-CPU), spin_a on CPU
#   python3 pywork.py READY_FILE burst  Worker.step and caller_b for 0.3 s of CPU, then exits
# The ready file appears once the loop runs; it runs until killed (burst: ends).
import asyncio
import sys
import threading
import time
import zlib


def hot_a(n):
    x = 0
    for i in range(n):
        x += i * i  # HOT_A_LINE
    return x


def hot_b(n):
    x = 0
    for i in range(n):
        x += i * i  # HOT_B_LINE
    return x


class Worker:
    def step(self):
        return hot_a(3 * UNIT)


def caller_b():
    return hot_b(UNIT)


def gen_values(n):
    for i in range(n):
        yield i * 3


def keyfn(v):
    return (v * 7919) % 1009 + sum(range(20))


def leaf_work():
    return sum(i for i in range(30000))


def recurse(depth):
    if depth == 0:
        return leaf_work()
    return recurse(depth - 1) + 1


def größe():
    return sum(i * 2 for i in range(UNIT // 4))


async def coro_work():
    x = 0
    for i in range(UNIT // 2):
        x += i
    await asyncio.sleep(0)
    return x


async def tasks():
    await asyncio.gather(asyncio.ensure_future(coro_work()))


def compress_loop():
    # about a third of a CPU: enough samples in C code, less CPU for the tests
    data = bytes(range(256)) * 512 + b"x" * (1 << 17)
    while True:
        zlib.compress(data, 9)
        time.sleep(0.01)


UNIT = 20000


def mix(ready):
    threading.Thread(target=compress_loop, daemon=True).start()
    w = Worker()
    data = list(range(3000))
    first = True
    while True:
        for _ in range(4):
            w.step()
            caller_b()
        sum(gen_values(UNIT // 4))
        sorted(data, key=keyfn)
        recurse(150)
        größe()
        asyncio.run(tasks())
        if first:
            open(ready, "w").close()
            first = False


def spin_a():
    return sum(i * i for i in range(UNIT))


def napper():
    time.sleep(0.01)


def sleeper(ready):
    open(ready, "w").close()
    while True:
        napper()
        spin_a()


def burst(ready):
    open(ready, "w").close()
    w = Worker()
    end = time.process_time() + 0.3
    while time.process_time() < end:
        w.step()
        caller_b()


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    {"mix": mix, "sleep": sleeper, "burst": burst}[sys.argv[2]](sys.argv[1])
