# make soak's pandas cell (test/soak.c): a frame of soak_rows rows, which
# soak sets before it, grouped; its value is the sum of 0..soak_rows-1.
import numpy as np
import pandas as pd

rows = globals()["soak_rows"]
df = pd.DataFrame({"k": np.arange(rows) % 7, "v": np.arange(rows)})
g = df.groupby("k")["v"].sum()
print("rows", len(df))
int(g.sum())
