# a file put in place of another by os.replace
import os
open('ren.tmp', 'w').write('5678')
os.replace('ren.tmp', 'ren.txt')
