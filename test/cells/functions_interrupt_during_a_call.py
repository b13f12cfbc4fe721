# an interrupt during a slow host call, then another call
got = []
try:
    got.append(slow())
except KeyboardInterrupt:
    got.append('interrupted')
try:
    echo(1)
except KeyboardInterrupt as e:
    got.append(str(e))
