# The state a fatal cell must not take with it: a DataFrame of a million
# rows, its checksum, and a function defined in a cell.
import numpy as np
import pandas as pd

frame = pd.DataFrame({"a": np.arange(1_000_000, dtype=np.int64), "b": np.arange(1_000_000) % 7})


def frame_checksum():
    return int(frame["a"].sum() * 7 + frame["b"].sum())


checksum = frame_checksum()
checksum
