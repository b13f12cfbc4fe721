# renameat2 with RENAME_NOREPLACE still works (after try_oserror)
import os
[try_(lambda: sc(SYS_RENAMEAT2, -100, b'nodes/victim', -100, b'nodes/moved', 1)),
 sorted(os.listdir('nodes'))]
