# the host's canary variable, in os.environ and /proc/self/environ
import os
k = 'CI_TEST_' + 'CANARY'
v = ('ci-canary-' + 'value-7f3a9').encode()
try:
    env = open('/proc/self/environ', 'rb').read()
except PermissionError:
    env = b''
k in os.environ, v in b''.join(os.environb.values()), k.encode() in env, v in env
