# names of 255 bytes 120 levels deep in WHERE, with the walk's own names (.ci-rm-N), some locked
import os
top = os.open('.', os.O_RDONLY)
os.chdir(WHERE)
for i in range(120):
    for j in range(5):
        open(f'.ci-rm-{j}', 'w').close()
    os.mkdir('.ci-rm-5')
    n = f'{i:03d}' + 'n' * 252
    os.mkdir(n)
    os.chdir(n)
    if i % 40 == 39:
        os.chmod('..', 0o300)
os.fchdir(top)
os.close(top)
