# a figure of 50 dpi (after display_size)
import matplotlib.pyplot as plt
plt.figure(dpi=50)
plt.plot([1, 2])
size(plt.gcf())
