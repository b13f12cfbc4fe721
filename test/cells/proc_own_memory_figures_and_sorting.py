# the session's memory figures from sysconf, and sorting by numpy, pandas and qsort
import ctypes, os, numpy as np, pandas as pd
page = os.sysconf('SC_PAGE_SIZE')
phys, avail = os.sysconf('SC_PHYS_PAGES'), os.sysconf('SC_AVPHYS_PAGES')
a = np.random.default_rng(1).random(300000)
n = 300000
arr = (ctypes.c_int * n)(*np.random.default_rng(2).integers(0, 1 << 30, n))
cmp = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                       ctypes.POINTER(ctypes.c_int))(
    lambda x, y: (x[0] > y[0]) - (x[0] < y[0]))
ctypes.CDLL(None).qsort(arr, n, ctypes.sizeof(ctypes.c_int), cmp)
(phys * page == 2 << 30, 0 < avail < phys, os.cpu_count() >= 1,
 bool((np.diff(np.sort(a, kind='stable')) >= 0).all()),
 pd.Series(a).sort_values().is_monotonic_increasing,
 all(arr[i] <= arr[i + 1] for i in range(n - 1)))
