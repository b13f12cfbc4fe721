# writes 1 MiB files until the disk quota
i = 0
while True:
    with open(f'fill{i}', 'wb') as f:
        f.write(bytes(1 << 20))
    i += 1
