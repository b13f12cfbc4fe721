# /v1/leak by requests (with an Authorization of the cell's own) and urllib: all the cell sees of the answer and its environment
import os, requests, urllib.request
r = requests.get(f'http://127.0.0.1:{PORT}/v1/leak', headers={'Authorization': 'mine'})
print(r.status_code, r.text, dict(r.headers), dict(r.request.headers))
print(dict(os.environ))
u = urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v1/leak')
print(u.headers.items(), u.read())
