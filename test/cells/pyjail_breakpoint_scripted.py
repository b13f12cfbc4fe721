# breakpoint() with pdb's commands scripted in sys.stdin: os.system's result
import io, sys
sys.stdin = io.StringIO("import os; rc = os.system('touch ran_pdb')\nc\n")
try:
    breakpoint()
finally:
    sys.stdin = sys.__stdin__
globals()['rc'] != 0  # rc is the pdb command's
