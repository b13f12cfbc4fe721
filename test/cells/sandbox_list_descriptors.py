# lists the worker's descriptors and what each is
import os
links = []
for f in sorted(os.listdir('/proc/self/fd'), key=int):
    try:
        links.append((int(f), os.readlink('/proc/self/fd/' + f)))
    except OSError:
        pass
for f, l in links:
    print(f, l)
[f for f, l in links], [l.split(':')[0] for f, l in links]
