# a GET by urllib, a POST by http.client and a JSON POST by requests to the test's server at PORT
import urllib.request, http.client, requests
r = urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v1/echo?q=1', timeout=30)
print(r.status, r.headers['X-Served'], r.read().decode())
c = http.client.HTTPConnection('127.0.0.1', PORT)
c.request('POST', '/v1/echo', body=b'hello body', headers={'X-Cell': 'c1'})
print(c.getresponse().read().decode())
r = requests.post(f'http://127.0.0.1:{PORT}/v1/echo', json={'k': [1, 2]})
print(r.status_code, r.text)
