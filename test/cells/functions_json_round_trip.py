# JSON values through echo and back: their types and values
v = [{'k': [1, 2.5, 's', True, False, None]}, -2**63, 2**63 - 1, 1e-300, -0.0,
     'caf\u00e9', (1, 2), {}]
got = echo(*v)['args']
[type(x).__name__ for x in got], got[:6] == v[:6], got[6], got[7]
