# help() with PAGER naming a command, and no keyboard
import os
os.environ['PAGER'] = 'touch ran_help'
help()
'left help'
