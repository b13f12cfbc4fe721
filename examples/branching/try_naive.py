# Alternative 1: next quarter as this one.
name = 'naive: last value'


def model(history):
    return history[-1]


score = holdout_error(model)
score
