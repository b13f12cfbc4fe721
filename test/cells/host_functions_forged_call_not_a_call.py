# a forged call of lookup whose arguments are a list (after forge_call_frame)
import os, time
os.write(3, call(b'lookup', b'["not", "a", "call"]'))
time.sleep(5)
