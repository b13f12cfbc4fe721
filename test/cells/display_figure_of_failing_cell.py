# a figure drawn before the cell fails (after display_size)
import matplotlib.pyplot as plt
plt.figure(figsize=(2, 2))
plt.plot([1, 2])
size(plt.gcf())
1/0
