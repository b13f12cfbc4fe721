# Alternative 3: an AR(2) model, least squares on the history before it.
name = 'AR(2), least squares'


def model(history):
    y = history[2:]
    x = np.column_stack([np.ones(len(y)), history[1:-1], history[:-2]])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    return coef @ [1.0, history[-1], history[-2]]


score = holdout_error(model)
score
