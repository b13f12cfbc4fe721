# pandas reads /v1/data.csv and /v1/data.json from the test's server
import pandas as pd
df = pd.read_csv(f'http://127.0.0.1:{PORT}/v1/data.csv')
print(df.to_dict('list'))
print(pd.read_json(f'http://127.0.0.1:{PORT}/v1/data.json').to_dict('list'))
