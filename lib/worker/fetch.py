"""HTTP through the host (ci_config_allow_url).

The worker has no network stack. When the host allows URLs, its NETWORK
frame calls enable(), which gives every http.client connection (and
urllib3's, which requests uses) a socket that is not one: _HostSocket
keeps what the client writes, and when the client reads the response it
parses that request, sends it to the host as one FETCH frame
(lib/proto.h) through _codeinterp.host_fetch, and hands the client the
host's answer as the bytes of an HTTP/1.1 response. urllib.request,
requests and pandas (read_csv of a URL) all write through http.client,
so they all go this way. The host checks the URL against its allow list
and every byte again: nothing here is a boundary, and no system call
the seccomp filter refuses is made.

The worker embeds this file (tools/embed.sh) as _codeinterp_fetch.
"""
import http.client
import io
import re
import struct
import sys

import _codeinterp as _ci
from _codeinterp_outputs import size as _size

_limits = {'request': 0, 'response': 0}
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
_CONTROL = re.compile(rb'[\x00-\x08\x0a-\x1f\x7f]')
_METHOD = re.compile(rb'[A-Z]+\Z')
_DEFAULT_PORT = {'http': 80, 'https': 443}


def _unchunk(body):
    # The body of a request written with Transfer-Encoding: chunked.
    out, at = bytearray(), 0
    while True:
        end = body.find(b'\r\n', at)
        if end < 0:
            raise ValueError('a chunked request body cut short')
        try:
            n = int(body[at:end].split(b';', 1)[0], 16)
        except ValueError:
            raise ValueError('a chunked request body with a malformed chunk size') from None
        if n == 0:
            return bytes(out)
        out += body[end + 2:end + 2 + n]
        at = end + 2 + n + 2


def parse_request(data):
    """(method, target, header lines, body) of the request bytes data, as
    http.client writes it: the request line, "Name: value" lines (a value
    folded onto a line starting with a space or tab joined back), a blank
    line, and the body, by Content-Length or chunked. ValueError for
    anything else."""
    head, sep, body = data.partition(b'\r\n\r\n')
    if not sep:
        raise ValueError('an HTTP request without the end of its headers')
    lines = head.split(b'\r\n')
    parts = lines[0].split(b' ')
    if len(parts) != 3 or not parts[2].startswith(b'HTTP/'):
        raise ValueError(f'a malformed HTTP request line {lines[0][:80]!r}')
    headers = []
    for line in lines[1:]:
        if line[:1] in (b' ', b'\t') and headers:
            headers[-1] = headers[-1] + b' ' + line.strip()
            continue
        name, colon, value = line.partition(b':')
        if not colon or not _TOKEN.match(name) or _CONTROL.search(value):
            raise ValueError(f'a malformed HTTP header line {line[:80]!r}')
        headers.append(name + b': ' + value.strip())
    names = {h.split(b':', 1)[0].lower(): h.split(b':', 1)[1].strip() for h in headers}
    if b'chunked' in names.get(b'transfer-encoding', b'').lower():
        body = _unchunk(body)
    elif b'content-length' in names:
        try:
            n = int(names[b'content-length'])
        except ValueError:
            raise ValueError('an HTTP request with a malformed Content-Length') from None
        if n > len(body):
            raise ValueError('an HTTP request body shorter than its Content-Length')
        body = body[:n]
    return parts[0], parts[1], headers, body


def url(scheme, host, port, target):
    """The absolute URL of a request for target (origin-form, "/path?q")
    on a connection to host and port."""
    if ':' in host:
        host = f'[{host}]'
    netloc = host if port == _DEFAULT_PORT[scheme] else f'{host}:{port}'
    return f'{scheme}://{netloc}{target}'


def encode(method, address, headers, body):
    """The FETCH payload (lib/proto.h) of a request; ValueError for what
    the host would refuse as malformed or over its limit."""
    if not _METHOD.match(method) or len(method) > _ci.FETCH_METHOD_MAX:
        raise ValueError(f'the HTTP method {method[:40]!r} is not one the host sends'
                         ' (upper-case letters only)')
    target = address.encode('ascii')
    if len(target) > _ci.FETCH_URL_MAX:
        raise ValueError(f'the URL is over {_ci.FETCH_URL_MAX} bytes')
    head = b''.join(h + b'\r\n' for h in headers)
    if len(head) > _ci.FETCH_HEAD_MAX:
        raise ValueError(f'the request headers are over {_ci.FETCH_HEAD_MAX} bytes')
    if len(body) > _limits['request']:
        raise ValueError(f'the request body is {len(body)} bytes, over this sandbox\'s'
                         f' request limit of {_size(_limits["request"])}')
    return struct.pack('=III', len(method), len(target), len(head)) + method + target + head + body


def response(status, data):
    """The HTTP/1.1 response bytes http.client reads for the host's reply
    (status, data), or the exception the request raises in the cell."""
    if status == _ci.FETCH_DONE:
        code, hl = struct.unpack_from('=II', data)
        reason = http.client.responses.get(code, 'Unknown').encode('ascii')
        body = data[8 + hl:]
        return b'HTTP/1.1 %d %s\r\n%s' % (code, reason, data[8:8 + hl]) + (
            b'Content-Length: %d\r\nConnection: close\r\n\r\n' % len(body)) + body
    message = data.decode('utf-8', 'replace')
    if status == _ci.FETCH_REFUSED:
        raise PermissionError(message)
    if status == _ci.FETCH_TIMED_OUT:
        raise TimeoutError(message)
    if status == _ci.FETCH_FAILED:
        raise ConnectionError(message or 'the host could not make the request')
    raise KeyboardInterrupt('the HTTP request was not answered: the cell is being interrupted')


class _HostSocket:
    """What an HTTP connection writes to and reads from in place of a
    socket: one request, then the host's response."""

    def __init__(self, scheme, host, port):
        self._scheme, self._host, self._port = scheme, host, port
        self._out = bytearray()
        self._timeout = None

    def sendall(self, data):
        self._out += data
        # Held to what the host would take, with room for the headers.
        if len(self._out) > _limits['request'] + 2 * _ci.FETCH_HEAD_MAX:
            self._out.clear()
            raise ValueError(f'the request is over this sandbox\'s request limit of'
                             f' {_size(_limits["request"])}')

    def send(self, data):
        self.sendall(data)
        return len(data)

    def makefile(self, mode='rb', buffering=None, **kwargs):
        data, self._out = bytes(self._out), bytearray()
        method, target, headers, body = parse_request(data)
        if not target.startswith(b'/'):
            raise ValueError(f'the request target {target[:80]!r} is not a path')
        address = url(self._scheme, self._host, self._port, target.decode('ascii'))
        return io.BytesIO(response(*_ci.host_fetch(encode(method, address, headers, body))))

    def settimeout(self, timeout):
        self._timeout = timeout

    def gettimeout(self):
        return self._timeout

    def setsockopt(self, *args):
        pass

    def shutdown(self, how):
        pass

    def close(self):
        self._out.clear()


def _connect(scheme):
    def connect(self):
        if getattr(self, '_tunnel_host', None):
            raise PermissionError('a proxy tunnel is not available in this sandbox;'
                                  ' the host makes the request itself')
        self.sock = _HostSocket(scheme, self.host, self.port)
        if scheme == 'https':
            self.is_verified = True  # libcurl verifies the server on the host
    return connect


def _patch_urllib3(module):
    module.HTTPConnection.connect = _connect('http')
    module.HTTPSConnection.connect = _connect('https')


def _patch_requests(module):
    def cert_verify(self, conn, url, verify, cert):
        # The host verifies the server, with libcurl and the host's CA
        # certificates; the worker has none, which requests would check
        # for (verify=False in a cell does not turn the host's check off).
        conn.cert_reqs, conn.ca_certs, conn.ca_cert_dir = 'CERT_REQUIRED', None, None
    module.HTTPAdapter.cert_verify = cert_verify


# Modules whose connections are patched when they are imported.
_PATCHES = {'urllib3.connection': _patch_urllib3, 'requests.adapters': _patch_requests}


class _PatchOnImport:
    """A meta path finder that patches a module of patches (its name: the
    function) once the finder after it has loaded it: urllib3 and
    requests are imported only by the cells that use them."""

    def __init__(self, patches):
        self._patches = patches

    def find_spec(self, name, path, target=None):
        if name not in self._patches:
            return None
        # Only the finders after this one: one before it (the manifest's)
        # may be asking.
        at = sys.meta_path.index(self) + 1 if self in sys.meta_path else 0
        for finder in sys.meta_path[at:]:
            if not hasattr(finder, 'find_spec'):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                load = spec.loader.exec_module

                def exec_module(module):
                    load(module)
                    self._patches[name](module)
                spec.loader.exec_module = exec_module
                return spec
        return None


_on_import = _PatchOnImport({})


def _patch(patches):
    # Patches each module of patches now if it is loaded, else when it is.
    for name, patch in patches.items():
        if name in sys.modules:
            patch(sys.modules[name])
    _on_import._patches.update(patches)
    if _on_import not in sys.meta_path:
        sys.meta_path.insert(0, _on_import)


def enable(request_limit, response_limit):
    """Sends the requests of http.client's connections, and of urllib3's
    and requests' when a cell imports them, to the host, with the host's
    body limits."""
    _limits['request'], _limits['response'] = request_limit, response_limit
    http.client.HTTPConnection.connect = _connect('http')
    http.client.HTTPSConnection.connect = _connect('https')
    _patch(_PATCHES)


# Without the patch, requests checks for a CA bundle before it connects,
# and an https request in a worker without network would fail with
# "Could not find a suitable TLS CA certificate bundle" instead of the
# sandbox's refusal of the connection (refusals.py). So it is in place
# from the start, network or not.
_patch({'requests.adapters': _patch_requests})
