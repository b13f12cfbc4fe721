# nested directories with files made in the workspace, then locked: inner mode 0, locked 0o500
import os
os.makedirs('a/b/c')
open('a/b/c/f.txt', 'w').write('x')
os.makedirs('locked/inner')
open('locked/inner/g', 'w').write('y')
os.chmod('locked/inner', 0)
os.chmod('locked', 0o500)
