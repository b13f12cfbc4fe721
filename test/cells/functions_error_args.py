# the host's PermissionError, caught: its args
try:
    fail()
except PermissionError as e:
    r = e.args
r
