# directories of mode 0 in HOME, TMPDIR and, if WS, the workspace, a chain below; HOME, TMPDIR shut
import os
home, tmp = os.environ['HOME'], os.environ['TMPDIR']
for d in (home, tmp) + ((os.getcwd(),) if WS else ()):
    os.makedirs(f'{d}/locked/inner')
    open(f'{d}/locked/inner/f', 'w').close()
    open(f'{d}/locked/f', 'w').close()
    top = os.open('.', os.O_RDONLY)
    os.chdir(f'{d}/locked/inner')
    for i in range(100):
        os.mkdir('d')
        os.chdir('d')
        if i % 7 == 0:
            os.chmod('..', 0)
    os.fchdir(top)
    os.close(top)
    os.chmod(f'{d}/locked/inner', 0)
    os.chmod(f'{d}/locked', 0)
os.chmod(home, 0)
os.chmod(tmp, 0o100)
'made'
