# The pandas workload of make bench (bench/bench.c runs it as a cell,
# bench/jupyter_bench.py runs it in plain /usr/bin/python3): a merge and
# a group-by over 1,000,000 generated rows, fixed seed. Its imports are
# of modules already loaded on both sides, so they cost nothing.
import numpy as np
import pandas as pd
rng = np.random.default_rng(20240501)
n = 1_000_000
df = pd.DataFrame({
    "k": rng.integers(0, 10_000, n),
    "g": rng.integers(0, 50, n),
    "x": rng.random(n),
})
dim = pd.DataFrame({"k": np.arange(10_000), "w": rng.random(10_000),
                    "cat": rng.integers(0, 20, 10_000)})
m = df.merge(dim, on="k", how="left")
agg = m.groupby(["g", "cat"]).agg(s=("x", "sum"), w=("w", "mean"), c=("k", "size")).reset_index()
_bench_check = int(agg.c.sum())
