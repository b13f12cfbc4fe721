# The state every alternative starts from: US quarterly unemployment,
# 1959-2009 (macrodata.csv), the last 20 quarters held out.
import numpy as np
import pandas as pd

macro = pd.read_csv('macrodata.csv')
unemp = macro['unemp'].to_numpy()
train, test = unemp[:-20], unemp[-20:]


def holdout_error(forecast):
    """Mean absolute error of one-quarter-ahead forecasts over the held-out
    quarters: forecast(history) gives the next value."""
    errors = [abs(forecast(unemp[:len(train) + i]) - test[i]) for i in range(len(test))]
    return float(np.mean(errors))


print(f'{len(unemp)} quarters, {len(test)} held out')
