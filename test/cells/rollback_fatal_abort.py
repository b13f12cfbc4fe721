# A fatal cell: an extension's abort().
import ctypes

ctypes.CDLL(None).abort()
