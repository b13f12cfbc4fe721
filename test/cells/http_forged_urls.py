# host_fetch of URLs the policy refuses, each frame made by fetch() (after http_fetch)
import _codeinterp as ci
for u in ['http://evil.example/', f'http://x:y@127.0.0.1:{PORT}/v1/echo',
          f'http://127.0.0.1:{PORT}/v1/echo\r\nX: y', 'file:///etc/passwd',
          f'gopher://127.0.0.1:{PORT}/v1/', f'http://127.0.0.1:{PORT}/v1/../other']:
    status, why = ci.host_fetch(fetch('GET', u))
    print(status, why.decode())
