# files in TMPDIR and HOME, none in the workspace
import os
open(os.path.join(os.environ['TMPDIR'], 't2.txt'), 'w').write('t')
open(os.path.join(os.environ['HOME'], 'c2.txt'), 'w').write('c')
