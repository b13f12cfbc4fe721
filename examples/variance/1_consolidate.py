# Consolidate the four quarterly general-ledger exports into one table.
import glob
import pandas as pd
pd.set_option('display.width', 160)
pd.set_option('display.max_columns', 20)
pd.options.display.float_format = '{:,.1f}'.format

exports = sorted(glob.glob('gl_actuals_*.csv'))
gl = pd.concat([pd.read_csv(f, dtype={'account': int}).assign(export=f) for f in exports],
               ignore_index=True)
for f, n in gl['export'].value_counts(sort=False).items():
    print(f'{f}: {n} journal lines')
print('currencies:', ', '.join(gl['currency'].unique()))
print(f'{len(gl)} journal lines, {gl["department"].nunique()} departments, '
      f'{gl["account"].nunique()} accounts')

# The ledger's sign: debits positive, credits negative, so revenue (4xxx)
# comes out negative. A report reads both revenue and cost as positive.
gl['account_type'] = gl['account'].map(lambda a: 'revenue' if 4000 <= a < 5000 else 'cost')
gl['amount_usd'] = gl['amount'].where(gl['account_type'] == 'cost', -gl['amount'])
gl['quarter'] = pd.PeriodIndex(gl['period'], freq='M').asfreq('Q').astype(str)

keys = ['quarter', 'department', 'account', 'account_name', 'account_type']
actuals = gl.groupby(keys, as_index=False)['amount_usd'].sum().rename(columns={'amount_usd': 'actual'})
actuals.pivot_table(index='account_type', columns='quarter', values='actual', aggfunc='sum')
