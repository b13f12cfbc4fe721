# shutil's copy, copy2 and copytree of system files: the modes they give
import os, shutil
shutil.copy('/usr/lib/python3.11/os.py', 'os_copy.py')
shutil.copy2('/usr/lib/python3.11/os.py', 'os_copy2.py')
shutil.copytree('/usr/lib/python3.11/json', 'json_copy')
[oct(os.stat(p).st_mode & 0o7777) for p in
  ('os_copy.py', 'os_copy2.py', 'json_copy', 'json_copy/decoder.py')]
