# a fresh posix from _imp.create_builtin: its system's result
import _imp, importlib.machinery
spec = importlib.machinery.ModuleSpec('posix', importlib.machinery.BuiltinImporter,
                                      origin='built-in')
p = _imp.create_builtin(spec)
_imp.exec_builtin(p)
p.system('touch ran_imp') != 0
