# /v1/slow, an answer that never comes, by requests and urllib
import requests, urllib.request
try:
    requests.get(f'http://127.0.0.1:{PORT}/v1/slow')
except requests.Timeout as e:
    print('requests timed out:', e)
try:
    urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v1/slow')
except OSError as e:
    print('urllib:', e)
