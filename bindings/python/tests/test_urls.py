"""HTTP through the host from the binding: allow_urls and url_limits
(ci_config_allow_url(3)), against a server of the test's own on loopback."""
import http.server
import threading

import pytest

import codeinterp


@pytest.fixture
def server():
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append((self.path, self.headers.get('X-Key')))
            body = b'region,sales\nEMEA,120\n'
            self.send_response(200)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield 'http://127.0.0.1:%d/v1/' % httpd.server_address[1], seen
    httpd.shutdown()
    httpd.server_close()


def test_a_cell_reads_an_allowed_csv_with_the_hosts_header(server):
    prefix, seen = server
    with codeinterp.Session(timeout_ms=60_000, allow_urls={prefix: ['X-Key: k-71f2']},
                            url_limits=(4096, 1 << 20, 20_000)) as s:
        r = s.run("import pandas as pd\n"
                  "df = pd.read_csv('%sdata.csv')\n"
                  "print(df.to_dict('list'))\n"
                  "try:\n"
                  "    pd.read_csv('%s')\n"
                  "except OSError as e:\n"
                  "    print(e)\n" % (prefix, prefix.replace('/v1/', '/v2/')))
        assert r.ok, r.error
        assert "{'region': ['EMEA'], 'sales': [120]}" in r.stdout
        assert 'not allowed in this sandbox; allowed: %s' % prefix in r.stdout
        assert 'k-71f2' not in r.stdout
    assert seen == [('/v1/data.csv', 'k-71f2')]


def test_bad_prefixes_and_headers_are_refused():
    with pytest.raises(codeinterp.InvalidArgumentError, match='allow_urls'):
        codeinterp.Session(allow_urls=['file:///etc/passwd'])
    with pytest.raises(codeinterp.InvalidArgumentError) as e:
        codeinterp.Session(allow_urls={'http://127.0.0.1:9/': ['X-Key: s3cret\r\nX: y']})
    assert 's3cret' not in str(e.value)
    with pytest.raises(codeinterp.InvalidArgumentError, match='url_limits'):
        codeinterp.Session(url_limits=(0, 1, 1))
