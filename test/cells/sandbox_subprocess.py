# subprocess.run of /bin/sh is refused, and the command did not run
import os, subprocess
try:
    subprocess.run(['/bin/sh', '-c', ': > sp_ran'])
    r = 'ran'
except OSError as e:
    r = type(e).__name__
r, os.path.exists('sp_ran')
