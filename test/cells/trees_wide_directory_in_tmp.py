# a directory of 100000 empty files in TMPDIR
import os
d = os.path.join(os.environ['TMPDIR'], 'wide')
os.mkdir(d)
fd = os.open(d, os.O_RDONLY)
for i in range(100000):
    os.close(os.open(str(i), os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
os.close(fd)
len(os.listdir(d)) == 100000 and 'made'
