# whether / refuses a new directory, SESSION_DIR/workspace is there, the mounts above SESSION_DIR
import os
mounts = [l.split()[4] for l in open('/proc/self/mountinfo')]
def refused(path):
    try:
        os.mkdir(path)
    except OSError:
        return True
    return False
above = os.path.dirname(SESSION_DIR) + '/'
(refused('/new'), os.path.isdir(f'{SESSION_DIR}/workspace'),
 [m for m in mounts if m.startswith(above)])
