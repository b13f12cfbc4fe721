# a figure shown by display(): returned once (after display_size)
import matplotlib.pyplot as plt
fig = plt.figure(figsize=(2, 2))
plt.plot([1, 2])
size(fig)
display(fig)
