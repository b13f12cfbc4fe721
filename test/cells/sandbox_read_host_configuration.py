# reading files of the host's /etc and /root, and listing /etc (after try_oserror)
import os
([try_(lambda: open(p).read()) for p in
    ('/etc/passwd', '/etc/shadow', '/etc/hostname', '/root/.bashrc')]
 + [try_(lambda: os.listdir('/etc'))])
