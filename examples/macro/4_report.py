# A variance report per series, as CSV and as a Markdown table.
rows = []
for name in series:
    s = qoq[name].dropna()
    rows.append({'series': name, 'unit': 'pp' if name == 'unemp' else '%',
                 'mean': s.mean(), 'std': s.std(), 'variance': s.var(),
                 'min': s.min(), 'min_quarter': str(s.idxmin()),
                 'max': s.max(), 'max_quarter': str(s.idxmax())})
report = (pd.DataFrame(rows).set_index('series')
          .sort_values('variance', ascending=False).round(3))
report.to_csv('variance_report.csv')

def cell(v):
    return f'{v:.3f}' if isinstance(v, float) else str(v)

header = ['series'] + list(report.columns)
lines = ['# Variance of quarter-over-quarter change, '
         f'{df.index[1]} to {df.index[-1]}', '',
         'Change in % on the previous quarter (unemp: in percentage points),'
         ' sorted by variance.', '',
         '| ' + ' | '.join(header) + ' |',
         '|' + '|'.join(':---' if h in ('series', 'unit') or h.endswith('quarter')
                        else '---:' for h in header) + '|']
for name, row in report.iterrows():
    lines.append('| ' + ' | '.join([name] + [cell(v) for v in row]) + ' |')
with open('variance_report.md', 'w') as f:
    f.write('\n'.join(lines) + '\n')
print('\n'.join(lines[4:]))
