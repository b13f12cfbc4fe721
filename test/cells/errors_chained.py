# a TypeError raised while handling a KeyError
try:
    {}['k']
except KeyError:
    raise TypeError('second')
