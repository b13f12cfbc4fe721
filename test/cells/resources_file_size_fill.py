# sixteen 4 MiB files, then one of 5 MiB over the file size limit
for i in range(16):
    with open(f'fill{i}', 'wb') as f:
        f.write(bytes(4 * 2**20))
with open('over', 'wb') as f:
    f.write(bytes(5 * 2**20))
