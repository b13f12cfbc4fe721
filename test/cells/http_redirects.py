# a redirect away from the prefix by requests and urllib, then one inside it
import requests, urllib.request
try:
    requests.get(f'http://127.0.0.1:{PORT}/v1/away')
except requests.ConnectionError as e:
    print('requests:', e)
try:
    urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v1/away')
except OSError as e:
    print('urllib:', e)
print(requests.get(f'http://127.0.0.1:{PORT}/v1/inside').text)
