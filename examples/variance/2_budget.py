# Put the budget beside the actuals: variance in USD and %, and whether it
# is favourable (revenue above budget, cost below it) or unfavourable.
budget = (pd.read_csv('budget_2025.csv', dtype={'account': int})
          .melt(id_vars=['department', 'account', 'account_name', 'account_type'],
                var_name='quarter', value_name='budget')
          .astype({'budget': float}))
lines = actuals.merge(budget, on=keys, how='outer', indicator=True)
print('lines only in the ledger or only in the budget:',
      int((lines['_merge'] != 'both').sum()))
lines = lines.drop(columns='_merge').fillna({'actual': 0.0, 'budget': 0.0})

lines['variance'] = lines['actual'] - lines['budget']
lines['variance_pct'] = lines['variance'] / lines['budget'] * 100
# What each line adds to operating profit: revenue counts +, cost -; the
# difference is the variance's effect on profit, + favourable, - unfavourable.
sign = lines['account_type'].map({'revenue': 1, 'cost': -1})
lines['profit_impact'] = lines['variance'] * sign
lines['direction'] = lines['profit_impact'].map(lambda v: 'F' if v >= 0 else 'U')

def summarise(df, by):
    """Each group's contribution to operating profit (revenue less cost),
    actual against budget, and the variance's effect on profit."""
    s = df['account_type'].map({'revenue': 1, 'cost': -1})
    g = (df.assign(actual=df['actual'] * s, budget=df['budget'] * s)
         .groupby(by)[['actual', 'budget']].sum())
    g['variance'] = g['actual'] - g['budget']
    g['variance_pct'] = g['variance'] / g['budget'].abs() * 100
    g['direction'] = g['variance'].map(lambda v: 'F' if v >= 0 else 'U')
    return g

def profit_lines(df, by):
    """Revenue, cost and operating profit, actual against budget."""
    rows = []
    for key, part in df.groupby(by):
        rev = part[part['account_type'] == 'revenue']
        cost = part[part['account_type'] == 'cost']
        for name, a, b in [('Revenue', rev['actual'].sum(), rev['budget'].sum()),
                           ('Cost', cost['actual'].sum(), cost['budget'].sum()),
                           ('Operating profit', rev['actual'].sum() - cost['actual'].sum(),
                            rev['budget'].sum() - cost['budget'].sum())]:
            good = (a - b) * (-1 if name == 'Cost' else 1)
            rows.append({by: key, 'line': name, 'actual': a, 'budget': b, 'variance': a - b,
                         'variance_pct': (a - b) / b * 100, 'direction': 'F' if good >= 0 else 'U'})
    return pd.DataFrame(rows).set_index([by, 'line'])

lines['year'] = '2025'
year = profit_lines(lines, 'year').droplevel(0)
year
