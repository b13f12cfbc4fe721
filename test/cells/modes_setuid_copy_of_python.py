# setuid, setgid, sticky modes by every call, and umask, on a copy of python (after try_oserror)
import ctypes, os, shutil
shutil.copyfile('/usr/bin/python3.11', 'py')
os.chmod('py', 0o700)
fd = os.open('py', os.O_RDONLY)
[try_(lambda: os.chmod('py', 0o4755)),
 try_(lambda: os.chmod('py', 0o6700)),
 try_(lambda: os.fchmod(fd, 0o4700)),
 try_(lambda: sc(SYS_FCHMOD, fd, 0o4700)),  # fchmod
 try_(lambda: sc(SYS_FCHMODAT, -100, b'py', 0o2700, 0)),  # fchmodat
 try_(lambda: sc(452, -100, b'py', 0o4700, 0)),  # fchmodat2
 try_(lambda: os.open('py2', os.O_CREAT | os.O_WRONLY, 0o4755)),
 try_(lambda: sc(SYS_CREAT, b'py3', 0o6755)),  # creat
 try_(lambda: sc(SYS_OPEN, b'py4', os.O_CREAT | os.O_WRONLY, 0o4700)),  # open
 try_(lambda: sc(437, -100, b'py5',  # openat2
                 ctypes.c_char_p((os.O_CREAT | os.O_WRONLY).to_bytes(8, 'little')
                                 + (0o4700).to_bytes(8, 'little') + bytes(8)), 24)),
 try_(lambda: os.mkdir('sgid', 0o2700)),
 try_(lambda: os.mkdir('sticky', 0o1777)),
 try_(lambda: sc(SYS_UMASK, 0)),  # umask
 try_(lambda: sc(SYS_UMASK, 0o22)),
 os.listdir('.').count('py2') + os.listdir('.').count('py3')
 + os.listdir('.').count('py4') + os.listdir('.').count('py5')]
