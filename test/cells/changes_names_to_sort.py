# files whose names sort by byte, with a directory among them
import os
os.makedirs('mid', exist_ok=True)
for name in ('zeta', 'mid/x', 'mid.txt', 'Alpha'):
    open(name, 'w').write(name)
