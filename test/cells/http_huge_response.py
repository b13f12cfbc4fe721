# reads /v1/huge, an answer over the response limit, by urllib
import urllib.request
try:
    urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v1/huge').read()
except OSError as e:
    print(type(e).__name__, e)
