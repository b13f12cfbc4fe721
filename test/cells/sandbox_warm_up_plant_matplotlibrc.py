# plants a matplotlibrc where the warm-up could read one, and a file in TMPDIR
import os
for d in ('.', os.environ['HOME'], os.environ['MPLCONFIGDIR']):
    open(os.path.join(d, 'matplotlibrc'), 'w').write('figure.dpi: 33\n')
open(os.path.join(os.environ['TMPDIR'], 'left'), 'w').write('x')
import matplotlib
matplotlib.rc_file(os.path.join(os.environ['HOME'], 'matplotlibrc'))
matplotlib.rcParams['figure.dpi']
