# makes directories and files of wide modes in the workspace, HOME and TMPDIR
import os
for d in ('.', os.environ['HOME'], os.environ['TMPDIR']):
    os.makedirs(f'{d}/wide/er', 0o777)
    os.close(os.open(f'{d}/wide/f', os.O_CREAT | os.O_WRONLY, 0o666))
'made'
