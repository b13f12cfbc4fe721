# a file at the top and one in a new directory
import os
os.makedirs('sub', exist_ok=True)
open('sub/b.txt', 'w').write('b')
open('a.csv', 'w').write('x,y\n1,2\n')
