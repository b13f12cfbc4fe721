import os
os.path.exists('/tmp/ci_abspath_escape.py')
