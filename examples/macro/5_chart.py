# A chart of year-over-year change, recessions shaded.
import matplotlib.pyplot as plt

x = yoy.index.to_timestamp()
falling = qoq.index[qoq['realgdp'] < 0]
labels = {'realgdp': 'real GDP', 'realcons': 'real consumption',
          'realinv': 'real investment'}
colors = {'realgdp': 'tab:blue', 'realcons': 'tab:orange',
          'realinv': 'tab:green'}
fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(11, 7), dpi=100)
for ax, names in [(top, ['realgdp', 'realcons']), (bottom, ['realinv'])]:
    for q in falling:
        ax.axvspan(q.start_time, q.end_time, color='0.87', lw=0)
    for name in names:
        ax.plot(x, yoy[name], lw=1.5, color=colors[name], label=labels[name])
    ax.axhline(0, color='black', lw=0.8)
    ax.set_ylabel('% change, year over year')
    ax.grid(axis='y', color='0.9')
    ax.legend(loc='lower left', frameon=False)
top.set_title(f'US real GDP, consumption and investment, {yoy.index[4]}-{yoy.index[-1]}\n'
              '(grey: quarters in which real GDP fell)')
bottom.margins(x=0.01)
fig.tight_layout()
fig.savefig('variance_chart.png')   # a file, and the figure comes back too
print(f'chart: {len(falling)} quarters of falling real GDP shaded')
