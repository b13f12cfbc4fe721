# a hard link to the host's file CANARY made in the workspace, written through
import os
os.link(CANARY, 'hard_write')
with open('hard_write', 'r+') as f:
    f.write('PWNED')
