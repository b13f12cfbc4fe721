# numpy, pandas, matplotlib and asyncio at work under the audit hook
import asyncio, socket, numpy as np, pandas as pd, matplotlib.pyplot as plt
pd.DataFrame({'a': np.arange(3)}).to_csv('hook.csv')
plt.plot([1, 2])
plt.savefig('hook.png')
plt.close('all')
a, b = socket.socketpair()
a.send(b'x')
asyncio.run(asyncio.sleep(0))
int(pd.read_csv('hook.csv')['a'].sum()), b.recv(1)
