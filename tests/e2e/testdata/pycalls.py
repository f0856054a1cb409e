"""pycalls.py - a Python program that counts its own function calls, for the
USDT test of Debian's /usr/bin/python3.11 (tests/e2e/usdt_test.go): its
python:function__entry hits must equal the count this program prints.

Usage: /usr/bin/python3.11 pycalls.py [N=200]

It prints "pycalls: ready" on stderr and waits for a line on stdin (time
for the tracer to attach with -p). Then it runs N rounds of known calls
(recursion, a class, keyword arguments, a closure) under _lsprof, the C
profiler behind cProfile: the profiler counts every Python function call
of the window and runs no Python code itself, so nothing is counted that
the program does not call. A profile function is needed on 3.11 anyway:
CPython 3.11 fires function__entry only where its eval loop is entered
from C, so the Python-to-Python calls it inlines fire it only while a
profile or trace function is set, which turns inlining off (fib(15) fires
it 2 times plainly, 1975 times under _lsprof). It prints "pycalls: calls=C expected=E" (E from
the known call tree: 177 calls of fib(10), 5 more calls per round, 1 of
work) and leaves with os._exit, so no Python code runs after the count
(no interpreter finalization). Only C functions run between the line on
stdin and the profiler's start, and between its stop and the exit. No
generators or comprehensions: in 3.11 those are Python frames too, and
a resumed generator enters its frame again.
"""
import os
import sys

import _lsprof


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


class Shape:
    def __init__(self, w):
        self.w = w

    def area(self):
        return self.w * self.w


def with_kwargs(a, *, b=2):
    return a + b


def closure():
    def inner(x):
        return x + 1

    return inner


def work(n):
    total = 0
    for i in range(n):
        total += fib(10)
        total += Shape(i).area()
        total += with_kwargs(i, b=i)
        total += closure()(i)
    return total


n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
expected = n * (177 + 5) + 1
profiler = _lsprof.Profiler()
print("pycalls: ready", file=sys.stderr, flush=True)
sys.stdin.readline()
profiler.enable()
work(n)
profiler.disable()
calls = 0
for entry in profiler.getstats():
    if type(entry.code) is not str:  # Python code; built-ins are named by a str
        calls += entry.callcount
print("pycalls: calls=%d expected=%d" % (calls, expected), file=sys.stderr, flush=True)
os._exit(0 if calls == expected else 1)
