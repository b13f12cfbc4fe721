# a file each in TMPDIR, HOME and the workspace
import os
open(os.path.join(os.environ['TMPDIR'], 't.txt'), 'w').write('t')
open(os.path.join(os.environ['HOME'], 'c.txt'), 'w').write('c')
open('ws.txt', 'w').write('w')
