# raises RouteOut if the worker has a route to a resolver of /etc/resolv.conf
import socket
class RouteOut(Exception):
    pass
try:
    servers = [l.split()[1] for l in open('/etc/resolv.conf')
               if l.split()[:1] == ['nameserver'] and len(l.split()) > 1]
except OSError:
    servers = []
for srv in servers:
    try:
        probe = socket.socket(socket.AF_INET6 if ':' in srv else socket.AF_INET,
                              socket.SOCK_DGRAM)
        probe.connect((srv, 53))
    except OSError:
        continue
    raise RouteOut(f'the worker has a route to the resolver {srv}')
