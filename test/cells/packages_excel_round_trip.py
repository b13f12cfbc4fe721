# a frame written to .xlsx by pandas and read back
import pandas as pd
q = pd.DataFrame({'dept': ['Sales', 'G&A'], 'amount': [1250.5, -80.25]})
q.to_excel('q.xlsx', index=False)
pd.read_excel('q.xlsx').equals(q)
