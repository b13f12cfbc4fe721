# a file forty directories down, and one at the top
import os
p = os.path.join('deep', *['d'] * 39)
os.makedirs(p)
open(os.path.join(p, 'bottom.txt'), 'w').write('x')
open('shallow.txt', 'w').write('s')
