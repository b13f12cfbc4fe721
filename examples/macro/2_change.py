# Quarter-over-quarter and year-over-year change.
series = ['realgdp', 'realcons', 'realinv', 'realgovt', 'realdpi',
          'cpi', 'm1', 'unemp']
levels = df[series]
qoq = levels.pct_change() * 100      # % change on the previous quarter
yoy = levels.pct_change(4) * 100     # % change on the same quarter a year earlier
# unemp is already a rate: its change is in percentage points, not %
qoq['unemp'] = levels['unemp'].diff()
yoy['unemp'] = levels['unemp'].diff(4)
print('QoQ change, last 4 quarters:')
print(qoq.tail(4).round(2))
print()
print('YoY change since 2008:')
yoy.loc['2008Q1':].round(2)
