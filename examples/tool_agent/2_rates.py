# FX rates from the one service this session may reach. The host makes
# the request and adds the service's token; the cell has only the URL.
import json
import os

url = json.load(open("services.json"))["fx_rates"]
rates = pd.read_csv(url)
print(rates.to_string(index=False))
print("the token is in the cell:", any("fx-service-token" in v for v in os.environ.values()))
