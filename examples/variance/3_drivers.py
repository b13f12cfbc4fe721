# Where the variance comes from: by department, and the largest lines.
by_dept = summarise(lines, 'department').sort_values('variance')
print('Full year by department: contribution to operating profit (revenue less cost)')
print(by_dept.round(1).to_string())
print()

drivers = (lines.assign(size=lines['profit_impact'].abs())
           .sort_values('size', ascending=False).head(8)
           [['quarter', 'department', 'account', 'account_name', 'actual', 'budget',
             'variance', 'variance_pct', 'direction']]
           .reset_index(drop=True))
drivers.index = pd.RangeIndex(1, len(drivers) + 1, name='rank')
print('Top drivers (quarter, department, account):')
drivers.round(1)
