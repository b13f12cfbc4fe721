# modes that let others into the workspace, HOME, TMPDIR or a file are refused (after try_oserror)
import os
home, tmp = os.environ['HOME'], os.environ['TMPDIR']
fd = os.open('.', os.O_RDONLY)
[try_(lambda: os.chmod('.', 0o755)),
 try_(lambda: os.chmod('..', 0o755)),
 try_(lambda: os.chmod('..', 0o711)),
 try_(lambda: os.chmod(home, 0o777)),
 try_(lambda: os.chmod(tmp, 0o1777)),
 try_(lambda: os.chmod('data.txt', 0o666)),
 try_(lambda: os.chmod('data.txt', 0o640)),
 try_(lambda: os.fchmod(fd, 0o705)),
 try_(lambda: os.chmod('.', 0o700)),
 try_(lambda: os.chmod('data.txt', 0o400)),
 try_(lambda: os.chmod('data.txt', 0o600))]
