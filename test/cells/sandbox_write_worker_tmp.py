# opens /tmp/NAME-cell for writing: 'written', or the OSError's name
try:
    open(f'/tmp/{NAME}-cell', 'w')
    r = 'written'
except OSError as e:
    r = type(e).__name__
r
