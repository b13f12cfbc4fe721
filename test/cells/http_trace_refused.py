# a TRACE request by http.client, which the host refuses before sending
import http.client
c = http.client.HTTPConnection('127.0.0.1', PORT)
try:
    c.request('TRACE', '/v1/echo'); c.getresponse()
except PermissionError as e:
    print('refused:', e)
