# make soak's figure cell (test/soak.c): a small figure, left open, so its
# PNG comes back; soak_y, which soak sets before it, is its last point.
import matplotlib.pyplot as plt

plt.figure(figsize=(2, 2))
plt.plot([1, 3, 2, globals()["soak_y"]]);
