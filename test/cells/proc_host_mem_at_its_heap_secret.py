# the host's /proc/PID/mem read at HEAP_ADDR, its heap secret HEAP_PAIR there (after has)
import os
fd = os.open(f'/proc/{HOST_PID}/mem', os.O_RDONLY)
has(os.pread(fd, 64, HEAP_ADDR), HEAP_PAIR)
