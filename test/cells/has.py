# defines has(data, pair): whether data holds the pair's halves back to back
def has(data, pair):
    a, b = pair
    i = data.find(a)
    while i >= 0:
        if data[i + len(a):i + len(a) + len(b)] == b:
            return True
        i = data.find(a, i + 1)
    return False
