# a linear regression by scikit-learn: its coefficient and intercept
from sklearn.linear_model import LinearRegression
import numpy as np
X = np.arange(10).reshape(-1, 1)
m = LinearRegression().fit(X, 2 * X.ravel() + 1)
(round(float(m.coef_[0]), 6), round(float(m.intercept_), 6))
