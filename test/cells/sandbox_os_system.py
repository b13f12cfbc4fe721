# os.system fails and the command did not run
import os
try:
    rc = os.system(': > sys_ran')
except OSError as e:
    rc = type(e).__name__
rc != 0, os.path.exists('sys_ran')
