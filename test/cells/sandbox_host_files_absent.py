# stats host paths the mount namespace leaves out, and two it keeps
import os
def st(p):
    try:
        os.stat(p)
        return 'there'
    except OSError as e:
        return type(e).__name__
[st(p) for p in ('/etc/shadow', '/etc/passwd', '/home', '/root', '/var',
                 '/boot', '/etc/hostname', '/usr/bin/python3', '/etc/localtime')]
