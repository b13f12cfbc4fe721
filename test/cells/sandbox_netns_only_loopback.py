# the network namespace's devices, IPv6 addresses and routes
import os
net = '/proc/self/net/'
([l.split(':')[0].strip() for l in open(net + 'dev').read().splitlines()[2:]],
 open(net + 'if_inet6').read() if os.path.exists(net + 'if_inet6') else '',
 '127.0.0.1' in open(net + 'fib_trie').read())
