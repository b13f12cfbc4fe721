# recursion through map() and list(), in C, with the limit lifted
import sys
sys.setrecursionlimit(10**6)
def f():
    return list(map(lambda _: f(), [0]))
f()
