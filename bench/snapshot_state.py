# make bench, row 9 (bench/bench.c): a session of 100 MB of DataFrame and
# a 1 MiB file; the value is what the state's own pickle and the file
# weigh, the measure of the snapshot's size.
import pickle

import numpy as np
import pandas as pd

frame = pd.DataFrame(np.random.default_rng(1).random((1_562_500, 8)))
with open('data.bin', 'wb') as f:
    f.write(bytes(1 << 20))
del f
len(pickle.dumps(frame, protocol=5)) + (1 << 20)
