# a file ten directories down
import os
p = os.path.join('ten', *['d'] * 9)
os.makedirs(p)
open(os.path.join(p, 'f'), 'w').write('x')
