# a 4x3 inch figure and a default one (after display_size)
import matplotlib.pyplot as plt
plt.figure(figsize=(4, 3))
plt.plot([1, 2])
size(plt.gcf())
plt.figure()
plt.plot([2, 1])
size(plt.gcf())
