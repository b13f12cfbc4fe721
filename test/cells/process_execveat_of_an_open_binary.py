# execveat of /bin/sh by descriptor (AT_EMPTY_PATH), to touch ran_execveat (after sc)
import ctypes, os
fd = os.open('/bin/sh', os.O_RDONLY)
argv = (ctypes.c_char_p * 4)(b'sh', b'-c', b'touch ran_execveat', None)
envp = (ctypes.c_char_p * 1)(None)
sc(322, fd, ctypes.c_char_p(b''), argv, envp, 0x1000)
