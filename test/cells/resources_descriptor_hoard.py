# opens /dev/null until the descriptor limit
def hoard():
    files = []
    while True:
        files.append(open('/dev/null'))
hoard()
