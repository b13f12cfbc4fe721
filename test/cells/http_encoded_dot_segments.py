# encoded dot segments and an encoded backslash after the prefix, by urllib
import urllib.request
for p in ['%2e%2e/secret', '%2E%2E%2Fsecret', '..%5csecret']:
    try:
        urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v1/' + p)
    except PermissionError as e:
        print('refused', 'encoded' in str(e))
