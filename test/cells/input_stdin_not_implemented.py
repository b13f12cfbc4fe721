# input() without a host answering: IPython's StdinNotImplementedError
from IPython.core.error import StdinNotImplementedError
try:
    input()
except StdinNotImplementedError as e:
    c = type(e)
c is StdinNotImplementedError
