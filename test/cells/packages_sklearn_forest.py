# a random forest of scikit-learn on two threads: its predictions
import numpy as np
from sklearn.ensemble import RandomForestClassifier
X = np.array([[0], [1], [2], [10], [11], [12]])
forest = RandomForestClassifier(n_estimators=10, n_jobs=2, random_state=0)
forest.fit(X, [0, 0, 0, 1, 1, 1]).predict([[1], [11]]).tolist()
