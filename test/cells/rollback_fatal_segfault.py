# A fatal cell: a crash in C (a NULL read).
import ctypes

ctypes.string_at(0)
