# REQUESTS refused requests to /v2/no, counted by why each was refused
import collections, urllib.request
said = collections.Counter()
for i in range(REQUESTS):
    try:
        urllib.request.urlopen(f'http://127.0.0.1:{PORT}/v2/no')
    except PermissionError as e:
        said['limit' if 'the most one cell may' in str(e) else 'list'] += 1
print(sorted(said.items()))
