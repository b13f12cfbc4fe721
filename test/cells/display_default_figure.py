# a figure of the default size with one plot (after display_size)
import matplotlib.pyplot as plt
plt.plot([3, 1, 2])
size(plt.gcf())
