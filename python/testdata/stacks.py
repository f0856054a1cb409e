# stacks.py: two threads, each stopped in a known chain of calls, for a
# frame walk to read. Prints one JSON line: per thread its
# threading.get_ident() (pthread_self) and its chain, innermost first, as
# the walk names frames (co_qualname from 3.11, else co_name); then waits
# for stdin to close.
import json
import sys
import threading

ready = threading.Event()
done = threading.Lock()  # held by main until stdin closes: z blocks in C


def z():
    ready.set()
    done.acquire()


def y():
    z()


def x():
    y()


def c():
    done.acquire()
    t = threading.Thread(target=x)
    t.start()
    ready.wait()
    chains = {"main": {"id": threading.get_ident(), "chain": ["c", "b", "a", "<module>"]},
              "thread": {"id": t.ident, "chain": ["z", "y", "x"]}}
    print(json.dumps(chains), flush=True)
    sys.stdin.read()
    done.release()
    t.join()


def b():
    c()


def a():
    b()


a()
