# pages whose body shows the credential, plain, upper-cased or gzip-encoded, asked for with gzip and br accepted; then /v1/echo
import requests
for page in ('headers', 'shout', 'gzip'):
    try:
        r = requests.get(f'http://127.0.0.1:{PORT}/v1/' + page,
                         headers={'Accept-Encoding': 'gzip, br'})
        print(page, 'given:', r.status_code, r.text)
    except requests.ConnectionError as e:
        print(page, 'refused:', e)
print('echo', requests.get(f'http://127.0.0.1:{PORT}/v1/echo').text)
