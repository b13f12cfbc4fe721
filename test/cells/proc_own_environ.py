# the host's secret ENV_PAIR and its name NAME_PAIR in /proc/self/environ, os.environb (after has)
import os
try:
    raw = open('/proc/self/environ', 'rb').read()
except PermissionError:
    raw = b''
envb = b'\0'.join(k + b'=' + v for k, v in os.environb.items())
[has(raw, ENV_PAIR), has(raw, NAME_PAIR), has(envb, ENV_PAIR), has(envb, NAME_PAIR)]
