# Quarter over quarter: the profit lines each quarter, the change in the
# actuals on the previous quarter, and each department's profit impact.
trend = profit_lines(lines, 'quarter')
actual_by_q = trend['actual'].unstack('line')[['Revenue', 'Cost', 'Operating profit']]
qoq = actual_by_q.pct_change() * 100
print('Actuals by quarter (USD):')
print(actual_by_q.to_string())
print()
print('Change on the previous quarter (%):')
print(qoq.round(1).to_string(na_rep='-'))
print()
dept_by_q = lines.pivot_table(index='department', columns='quarter', values='profit_impact',
                              aggfunc='sum')
print('Profit impact by department and quarter (USD):')
dept_by_q
