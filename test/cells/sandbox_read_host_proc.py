# reading the host's (HOST_PID) /proc entries, pid 1's, and the worker's own (after try_oserror)
import os
([try_(lambda: open(f'/proc/{HOST_PID}/{n}', 'rb').read())
  for n in ('environ', 'cmdline', 'status')]
 + [try_(lambda: os.listdir(f'/proc/{HOST_PID}')),
    try_(lambda: open('/proc/1/cmdline').read()),
    try_(lambda: open('/proc/self/cmdline').read()),
    try_(lambda: open(f'/proc/{os.getpid()}/status').read()),
    try_(lambda: os.listdir('/proc/thread-self/fd'))])
