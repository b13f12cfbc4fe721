# a .pyc of this Python's magic number written to the new file TARGET
import importlib.util, marshal
data = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(compile('1', 'x', 'exec'))
with open(TARGET, 'xb') as f:
    f.write(data)
