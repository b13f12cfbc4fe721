# The state a snapshot must carry (test_snapshot): a lambda, a class and
# a function defined in a cell, an object rebuilt by a cell's function
# that names a cell's class, shared references, a DataFrame, the
# generators' states and files in subdirectories, one executable.
import os
import random

import numpy as np
import pandas as pd

count = 41
add_one = lambda v: v + 1  # noqa: E731


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def norm2(self):
        return self.x ** 2 + self.y ** 2


def scaled(v):
    return v * count


class Pinged:
    def __init__(self, v):
        self.v = v

    def __reduce__(self):
        return (make_pinged, (self.v,))


def make_pinged(v):
    return Pinged(v)


p = Point(3, 4)
ping = make_pinged(5)
shared = [1, 2]
pair = (shared, shared)
frame = pd.DataFrame({'a': np.arange(1000), 'b': np.linspace(0, 1, 1000)})
random.seed(7)
np.random.seed(7)
os.makedirs('sub/deep', exist_ok=True)
with open('sub/deep/data.bin', 'wb') as f:
    f.write(bytes(range(256)))
with open('notes.txt', 'w') as f:
    f.write('hello')
with open('run.sh', 'w') as f:
    f.write('#!/bin/sh\n')
os.chmod('run.sh', 0o700)
