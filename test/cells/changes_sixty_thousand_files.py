# 60000 empty files in one directory
import os
os.mkdir('many')
for i in range(60000):
    open(f'many/{i:05}', 'w').close()
