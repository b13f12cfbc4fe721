# makes 1000 files and a 400-deep tree of directories
import os
os.mkdir('many')
for i in range(1000):
    open(f'many/{i}', 'w').close()
fd = os.open('.', os.O_RDONLY)
for i in range(400):
    os.mkdir('d' * 12)
    os.chdir('d' * 12)
os.fchdir(fd)
os.close(fd)
'made'
