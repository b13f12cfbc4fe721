# marshal.loads of seeded garbage and cut-short code objects: an error each
import marshal, random
rng = random.Random(20240611)
errors = 0
good = marshal.dumps(compile('x = [1, 2.5, "s", (None,)]', 'c', 'exec'))
for i in range(30):
    blob = rng.randbytes(rng.randrange(1, 200))
    for data in (blob, good[:rng.randrange(len(good))], bytes([0xe3]) + blob):
        try:
            marshal.loads(data)
        except (ValueError, EOFError, TypeError, SystemError, MemoryError):
            errors += 1
raise ValueError(f'{errors} bad inputs refused')
