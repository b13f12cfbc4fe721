# mkfifo, mknod and a renameat2 whiteout are refused (after try_oserror)
import os
os.mkdir('nodes')
open('nodes/victim', 'w').close()
[try_(lambda: os.mkfifo('nodes/fifo', 0o600)),
 try_(lambda: os.mknod('nodes/node', 0o600)),
 try_(lambda: os.mknod('nodes/chr', 0o20600, os.makedev(1, 3))),
 try_(lambda: sc(SYS_MKNOD, b'nodes/fifo2', 0o10600, 0)),  # mknod
 try_(lambda: sc(SYS_MKNODAT, -100, b'nodes/fifo3', 0o10600, 0)),  # mknodat
 try_(lambda: sc(SYS_RENAMEAT2, -100, b'nodes/victim', -100, b'nodes/moved', 4)),
 try_(lambda: sc(SYS_RENAMEAT2, -100, b'nodes/victim', -100, b'nodes/moved',
                 (1 << 32) | 4)),  # RENAME_WHITEOUT, and with a high bit
 sorted(os.listdir('nodes'))]
