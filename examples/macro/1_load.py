# Load and inspect.
import pandas as pd
pd.set_option('display.width', 120)
pd.set_option('display.max_columns', 20)

df = pd.read_csv('macrodata.csv')
df.index = pd.PeriodIndex(df['year'].astype(int).astype(str) + 'Q'
                          + df['quarter'].astype(int).astype(str), freq='Q')
df = df.drop(columns=['year', 'quarter'])
print('shape:', df.shape)
print('quarters:', df.index[0], 'to', df.index[-1])
print('columns:', ', '.join(df.columns))
print('missing values:', int(df.isna().sum().sum()))
df.head()
