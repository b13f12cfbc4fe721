# opening the host's (HOST_PID) memory to read and to write, and reading the cell's own maps
res = []
for mode in ('rb', 'r+b'):
    try:
        open(f'/proc/{HOST_PID}/mem', mode)
        res.append('opened')
    except OSError as e:
        res.append(type(e).__name__)
res, len(open('/proc/self/maps', 'rb').read()) > 0
