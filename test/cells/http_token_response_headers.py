# GET /v1/token by http.client: its status, headers and body as the cell gets them
import http.client
c = http.client.HTTPConnection('127.0.0.1', PORT)
c.request('GET', '/v1/token')
r = c.getresponse()
print(r.status, r.getheaders(), r.read())
