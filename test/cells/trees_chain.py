# a chain of LEVELS directories named d in WHERE, made one level at a time
import os
top = os.open('.', os.O_RDONLY)
os.chdir(WHERE)
for i in range(LEVELS):
    os.mkdir('d')
    os.chdir('d')
os.fchdir(top)
os.close(top)
'made'
