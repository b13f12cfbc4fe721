# makes empty files until the inode quota
import os
os.mkdir('many')
i = 0
while True:
    open(f'many/{i}', 'w').close()
    i += 1
