# a file thirty directories down, made from a host thread of a small stack
import os
os.makedirs(os.path.join('narrow', *['d'] * 30), exist_ok=True)
open(os.path.join('narrow', *['d'] * 30, 'f'), 'w').write('x')
'ok'
