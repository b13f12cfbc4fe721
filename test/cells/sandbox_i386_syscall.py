# an i386 system call (int 0x80) from machine code the cell maps
import ctypes, mmap
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(b'\xb8\x14\x00\x00\x00\xcd\x80\xc3')  # mov eax, 20 (i386 getpid); int 0x80; ret
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
ctypes.CFUNCTYPE(ctypes.c_int)(addr)()
