# three figures in one cell (after display_size)
import matplotlib.pyplot as plt
for w in (1, 2, 3):
    plt.figure(figsize=(2 * w, 1))
    plt.plot([0, w])
    size(plt.gcf())
