# input() interrupted, caught, then asked again
got = []
try:
    got.append(input('1'))
except KeyboardInterrupt:
    got.append('interrupted')
try:
    input('2')
except Exception as e:
    got.append(str(e))
got
