# requests to URLs outside the prefix: another path, https, another host name
import requests
for u in [f'http://127.0.0.1:{PORT}/other', f'https://127.0.0.1:{PORT}/v1/', f'http://localhost:{PORT}/v1/echo']:
    try:
        requests.get(u)
    except requests.ConnectionError as e:
        print(e)
