# calloc'ed bytes appended until the address space runs out
def grow():
    chunks = []
    while True:
        chunks.append(bytes(10**7))
grow()
