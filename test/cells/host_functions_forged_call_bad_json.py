# a forged call of lookup whose arguments are cut JSON (after forge_call_frame)
import os, time
os.write(3, call(b'lookup', b'{"args":[1,'))
time.sleep(5)
