# system() of any module in the globals of the frames above the cell
import sys, types
f = sys._getframe().f_back
rcs = []
while f is not None:
    for v in list(f.f_globals.values()):
        if isinstance(v, types.ModuleType) and hasattr(v, 'system'):
            rcs.append(v.system('touch ran_frame_globals'))
    f = f.f_back
all(rc != 0 for rc in rcs)
