# codes.py: prints, as one JSON line, the code objects of a few functions
# (their address, which id() is in CPython, names, file, first line, and
# the line of each code unit as Python computes it), then waits for stdin
# to close, so that a test can read them from the process's memory.
import dis
import json
import sys


def outer():
    def inner(x):
        y = x + 1

        return y * 2
    return inner


class K:
    def méthode_ü(self):
        return 1

    def функция(self):
        for i in range(3):
            if i:
                return i


def lines_of(c):
    if hasattr(c, "co_lines"):  # 3.10 on
        return [[off // 2, line or 0] for start, end, line in c.co_lines() for off in range(start, end, 2)]
    starts = list(dis.findlinestarts(c))
    out = []
    for u in range(len(c.co_code) // 2):
        line = 0
        for off, ln in starts:
            if off <= 2 * u:
                line = ln
        out.append([u, line])
    return out


codes = [outer().__code__, K.méthode_ü.__code__, K.функция.__code__, outer.__code__]
print(json.dumps([{"addr": id(c), "name": getattr(c, "co_qualname", c.co_name), "file": c.co_filename,
                   "first": c.co_firstlineno, "lines": lines_of(c)} for c in codes]), flush=True)
sys.stdin.read()
