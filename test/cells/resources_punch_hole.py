# 1 MiB allocated within the limit, freed by a punched hole (SYS_FALLOCATE; after sc)
import os
fd = os.open('blocks', os.O_RDWR)
os.posix_fallocate(fd, 0, 1 << 20)
before = os.fstat(fd).st_blocks
sc(SYS_FALLOCATE, fd, 3, 0, 1 << 20)  # PUNCH_HOLE | KEEP_SIZE
st = os.fstat(fd)
os.close(fd)
os.unlink('blocks')
before >= 2048, st.st_blocks < before, st.st_size
