# a matplotlib figure saved as plot.png
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3])
fig.savefig('plot.png')
open('plot.png', 'rb').read(8)
