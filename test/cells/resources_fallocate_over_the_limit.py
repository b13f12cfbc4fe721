# posix_fallocate of 225 MiB, past the file size limit
import os
fd = os.open('blocks', os.O_RDWR)
os.posix_fallocate(fd, 0, 225 << 20)
