# figures made out of their number order (after display_size)
import matplotlib.pyplot as plt
for n, w in ((5, 2), (3, 3), (4, 4)):
    plt.figure(num=n, figsize=(w, w)).add_subplot()
for n in (3, 4, 5):
    size(plt.figure(n))
