# the /proc files of the machine's memory and load that can be read
out = []
for p in ('meminfo', 'loadavg', 'stat', 'uptime', 'vmstat',
          'pressure/cpu', 'pressure/memory'):
    try:
        open('/proc/' + p).read()
        out.append(p)
    except OSError:
        pass
out
