# a file and a directory asked for with mode 0o777: the modes they get
import os
os.close(os.open('wide', os.O_CREAT | os.O_WRONLY, 0o777))
os.mkdir('wided', 0o777)
oct(os.stat('wide').st_mode & 0o7777), oct(os.stat('wided').st_mode & 0o7777)
