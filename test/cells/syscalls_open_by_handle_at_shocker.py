# name_to_handle_at of /etc/passwd, then open_by_handle_at of the handle, read (after sc)
import ctypes, os
handle = (ctypes.c_uint8 * 136)()
ctypes.c_uint32.from_buffer(handle).value = 128
mount_id = ctypes.c_int()
sc(303, -100, ctypes.c_char_p(b'/etc/passwd'), ctypes.byref(handle), ctypes.byref(mount_id), 0)
fd = sc(304, -100, ctypes.byref(handle), os.O_RDONLY)
os.read(fd, 1)[:0]
