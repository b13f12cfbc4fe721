"""HTTP through the host as a cell's clients see it (lib/worker/fetch.py),
with the host's side of _codeinterp.host_fetch played here."""
import http.client
import struct
import urllib.request

import pytest

import _codeinterp as ci
from conftest import fetch


def _decode(payload):
    ml, ul, hl = struct.unpack_from('=III', payload)
    at = 12
    method, url = payload[at:at + ml], payload[at + ml:at + ml + ul]
    head = payload[at + ml + ul:at + ml + ul + hl]
    return method, url.decode(), head.split(b'\r\n')[:-1], payload[at + ml + ul + hl:]


def _done(code, headers, body):
    return ci.FETCH_DONE, struct.pack('=II', code, len(headers)) + headers + body


@pytest.fixture
def host(monkeypatch):
    """Answers host_fetch with host.answer and keeps each request,
    decoded, in host.requests; http.client's connections go to it."""
    class Host:
        answer = _done(200, b'Content-Type: text/plain\r\nX-A: 1\r\n', b'hello')
        requests = []

    def host_fetch(payload):
        assert isinstance(payload, bytes)
        Host.requests.append(_decode(payload))
        return Host.answer
    Host.requests = []
    monkeypatch.setattr(ci, 'host_fetch', host_fetch, raising=False)
    monkeypatch.setitem(fetch._limits, 'request', 4096)
    monkeypatch.setitem(fetch._limits, 'response', 4096)
    monkeypatch.setattr(http.client.HTTPConnection, 'connect', fetch._connect('http'))
    monkeypatch.setattr(http.client.HTTPSConnection, 'connect', fetch._connect('https'))
    return Host


def test_a_request_crosses_as_method_url_headers_and_body(host):
    c = http.client.HTTPConnection('api.example.com', 8080)
    c.request('POST', '/v1/x?q=1', body=b'data', headers={'X-Cell': 'yes'})
    r = c.getresponse()
    assert (r.status, r.reason, r.getheader('X-A'), r.read()) == (200, 'OK', '1', b'hello')
    method, url, head, body = host.requests[0]
    assert (method, url, body) == (b'POST', 'http://api.example.com:8080/v1/x?q=1', b'data')
    assert b'X-Cell: yes' in head and b'Content-Length: 4' in head


def test_https_and_a_default_port_leave_the_port_out(host):
    assert urllib.request.urlopen('https://api.example.com/v1/').read() == b'hello'
    assert host.requests[0][1] == 'https://api.example.com/v1/'
    assert fetch.url('http', '::1', 8080, '/') == 'http://[::1]:8080/'


def test_a_chunked_body_is_sent_whole(host):
    c = http.client.HTTPConnection('api.example.com')
    c.request('PUT', '/v1/up', body=iter([b'ab', b'cde']), encode_chunked=True,
              headers={'Transfer-Encoding': 'chunked'})
    c.getresponse().read()
    assert host.requests[0][0] == b'PUT' and host.requests[0][3] == b'abcde'


@pytest.mark.parametrize('status, kind', [
    (ci.FETCH_REFUSED, PermissionError), (ci.FETCH_FAILED, ConnectionError),
    (ci.FETCH_TIMED_OUT, TimeoutError), (ci.FETCH_STOPPED, KeyboardInterrupt)])
def test_a_reply_that_is_no_response_raises(host, status, kind):
    host.answer = (status, b'' if status == ci.FETCH_STOPPED else b'why: allowed: x')
    c = http.client.HTTPConnection('api.example.com')
    c.request('GET', '/v1/')
    with pytest.raises(kind) as e:
        c.getresponse()
    assert status == ci.FETCH_STOPPED or str(e.value) == 'why: allowed: x'


def test_what_the_host_would_refuse_is_refused_here(host):
    with pytest.raises(ValueError, match='request limit of 4 KiB'):
        fetch.encode(b'POST', 'http://h/', [], b'x' * 4097)
    with pytest.raises(ValueError, match='upper-case'):
        fetch.encode(b'get', 'http://h/', [], b'')
    with pytest.raises(ValueError, match='malformed HTTP header'):
        fetch.parse_request(b'GET / HTTP/1.1\r\nBad Name: x\r\n\r\n')
    assert host.requests == []
