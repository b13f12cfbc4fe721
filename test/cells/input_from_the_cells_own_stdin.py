# input() from a stdin the cell set
import io, sys
sys.stdin = io.StringIO('7\n')
try:
    got = int(input('n? ')) * 6
finally:
    sys.stdin = sys.__stdin__
got
