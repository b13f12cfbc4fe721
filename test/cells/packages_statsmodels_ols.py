# an OLS fit by statsmodels: its parameters
import numpy as np
import statsmodels.api as sm
x = np.arange(20.0)
sm.OLS(3 * x + 2, sm.add_constant(x)).fit().params.round(6).tolist()
