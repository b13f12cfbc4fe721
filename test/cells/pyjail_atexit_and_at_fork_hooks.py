# an atexit hook and a fork hook that would run touch
import atexit, os
atexit.register(os.system, 'touch ran_atexit')
os.register_at_fork(before=lambda: open('ran_at_fork', 'w').close())
