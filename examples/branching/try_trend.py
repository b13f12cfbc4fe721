# Alternative 2: the straight line through the last eight quarters.
name = 'linear trend of the last 8 quarters'


def model(history):
    recent = history[-8:]
    slope, intercept = np.polyfit(np.arange(8), recent, 1)
    return slope * 8 + intercept


score = holdout_error(model)
score
