# a 4x3 inch figure with one plot (after display_size)
import matplotlib.pyplot as plt
fig = plt.figure(figsize=(4, 3))
fig.add_subplot().plot([1, 2, 3])
size(fig)
