# Python recursion with the limit lifted to a million
import sys
sys.setrecursionlimit(10**6)
def f(n):
    return f(n + 1)
f(0)
