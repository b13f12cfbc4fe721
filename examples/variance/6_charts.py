# The charts: variance by department, a bridge from budgeted to actual
# operating profit, and the quarterly trend against budget.
import matplotlib.pyplot as plt

GREEN, RED, GREY = '#2e7d32', '#c62828', '#90a4ae'

fig, ax = plt.subplots(figsize=(8, 4.5))
d = by_dept['variance'] / 1e3
ax.barh(d.index, d, color=[GREEN if v >= 0 else RED for v in d])
ax.axvline(0, color='black', lw=0.8)
for y, v in enumerate(d):
    ax.annotate(f'{v:+,.0f}k', (v, y), xytext=(4 if v >= 0 else -4, 0),
                textcoords='offset points', va='center', ha='left' if v >= 0 else 'right')
ax.set_xlabel('effect on operating profit, thousand USD (green: favourable)')
ax.set_title('2025 variance against budget by department')
ax.margins(x=0.25)
fig.tight_layout()
fig.savefig('chart_department_variance.png')

# The bridge: budgeted profit, each department's effect, actual profit.
steps = by_dept['variance'].sort_values(ascending=False) / 1e3
start, end = total['budget'] / 1e3, total['actual'] / 1e3
fig, ax = plt.subplots(figsize=(9, 4.5))
ax.bar(0, start, color=GREY)
levels = [start]
for i, (name, v) in enumerate(steps.items(), start=1):
    ax.bar(i, v, bottom=levels[-1], color=GREEN if v >= 0 else RED)
    ax.plot([i - 1.4, i + 0.4], [levels[-1]] * 2, color='0.5', lw=0.6)
    ax.annotate(f'{v:+,.0f}k', (i, max(levels[-1], levels[-1] + v)), xytext=(0, 3),
                textcoords='offset points', ha='center', fontsize=8)
    levels.append(levels[-1] + v)
ax.bar(len(steps) + 1, end, color=GREY)
ax.set_xticks(range(len(steps) + 2), ['Budget'] + list(steps.index) + ['Actual'],
              rotation=20, ha='right')
# The steps are small beside the profit: start the axis near them.
low, high = min(levels), max(levels)
ax.set_ylim(max(0, low - (high - low)), high + (high - low) * 0.3)
ax.set_ylabel('operating profit, thousand USD')
ax.set_title(f'Budget to actual operating profit, 2025: {end - start:+,.0f}k USD')
fig.tight_layout()
fig.savefig('chart_profit_bridge.png')

fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
for ax, name in zip(axes, ['Revenue', 'Cost', 'Operating profit']):
    t = trend.xs(name, level='line')[['actual', 'budget']] / 1e6
    ax.plot(t.index, t['budget'], '--o', color=GREY, label='budget')
    ax.plot(t.index, t['actual'], '-o', color='#1565c0', label='actual')
    ax.set_title(name)
    ax.set_ylabel('million USD')
    ax.grid(axis='y', color='0.9')
axes[0].legend(frameon=False)
fig.suptitle('2025 by quarter, actual against budget')
fig.tight_layout()
fig.savefig('chart_quarterly_trend.png')
print('charts: chart_department_variance.png, chart_profit_bridge.png, chart_quarterly_trend.png')
