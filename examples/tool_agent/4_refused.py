# Any other address is refused by the host's allow list.
import urllib.request

try:
    urllib.request.urlopen("http://127.0.0.1:1/admin")
except PermissionError as e:
    print("refused:", e)
