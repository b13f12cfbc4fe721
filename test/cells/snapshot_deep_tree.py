# A file in the 64th directory of the workspace, and a directory beside
# that one (test_snapshot).
import os

deep = '/'.join(['x'] * 64)
os.makedirs(deep, exist_ok=True)
with open(deep + '/f', 'w') as f:
    f.write('65th')
os.makedirs(deep[:-2] + '/d', exist_ok=True)
del f
