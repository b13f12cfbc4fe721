# the fill files removed, 1 MiB written again
import glob, os
for f in glob.glob('fill*'):
    os.unlink(f)
open('again', 'wb').write(bytes(1 << 20))
