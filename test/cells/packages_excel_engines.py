# packages_excel_round_trip's frame through xlsxwriter and odf, read back
import pandas as pd
q.to_excel('w.xlsx', index=False, engine='xlsxwriter')
q.to_excel('q.ods', index=False, engine='odf')
(pd.read_excel('w.xlsx', engine='openpyxl').equals(q),
 pd.read_excel('q.ods').equals(q))
