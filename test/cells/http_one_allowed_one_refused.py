# one allowed request to /v1/echo and one refused to /v2/no, by urllib
import urllib.request
print(urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v1/echo').read())
try:
    urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v2/no')
except PermissionError:
    print('refused')
