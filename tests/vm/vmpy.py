# SPDX-License-Identifier: MIT
# The guest workload of tests/vm/python-vm.sh: hot_a under Worker.step, 150
# Python frames deep, and napper in time.sleep, for ARGV[1] seconds. Only
# built-in modules: the guest has no stdlib but encodings.
import sys, time
def hot_a(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
class Worker:
    def step(self):
        return hot_a(60000)
def deep(n):
    if n == 0:
        return Worker().step()
    return deep(n - 1)
def napper():
    time.sleep(0.02)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    deep(150)
    napper()
