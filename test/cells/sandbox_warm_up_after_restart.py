# after a restart: the warm-up ignored the planted matplotlibrc, tmp/ is new
import os, matplotlib
(matplotlib.rcParams['figure.dpi'], os.path.exists('matplotlibrc'),
 'matplotlibrc' in os.listdir(os.environ['HOME']), os.listdir(os.environ['TMPDIR']))
