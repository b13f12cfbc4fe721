# A parent's state for its branches (test_fork): a lambda, a class and a
# function of a cell, a DataFrame, an iterator and a generator, each
# mid-iteration, and a file.
import numpy as np
import pandas as pd

base = 10
twice = lambda v: 2 * v  # noqa: E731


class Counter:
    def __init__(self):
        self.n = 0

    def bump(self):
        self.n += 1
        return self.n


def plus_base(v):
    return v + base


counter = Counter()
counter.bump()
table = pd.DataFrame({'v': np.arange(100_000)})
steps = iter(range(10))
next(steps)
squares = (i * i for i in range(10))
next(squares)
with open('shared.txt', 'w') as f:
    f.write('parent')
