# symlinks, a FIFO and a device node in the workspace and TMPDIR (after try_oserror)
import os
res = []
for d in ('.', os.environ['TMPDIR']):
    res += [try_(lambda: os.symlink('/etc/passwd', d + '/ln')),
            try_(lambda: os.symlink('x', d + '/ln')),
            try_(lambda: os.mkfifo(d + '/ff')),
            try_(lambda: os.mknod(d + '/nod', 0o600 | 0o020000, os.makedev(1, 3)))]
res, [n for n in os.listdir('.') + os.listdir(os.environ['TMPDIR'])
      if n in ('ln', 'ff', 'nod')]
