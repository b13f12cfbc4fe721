# a forged call of admin_reset written on the channel (after forge_call_frame)
import os, time
os.write(3, call(b'admin_reset', b'{"args":[],"kwargs":{}}'))
time.sleep(5)
