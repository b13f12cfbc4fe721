# In the branch the host kept: the model's forecast for the next quarter.
print(f'kept: {name}, mean absolute error {score:.4f} points')
print(f'forecast for the quarter after the data: {model(unemp):.2f}%')
