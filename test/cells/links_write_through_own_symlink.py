# a symlink to the host's file CANARY made in the workspace, written through
import os
os.symlink(CANARY, 'sym_write')
with open('sym_write', 'w') as f:
    f.write('PWNED')
