# a fresh posix from BuiltinImporter's spec, then execv
import importlib.machinery, importlib.util, sys
spec = importlib.machinery.BuiltinImporter.find_spec('posix')
fresh = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fresh)
assert fresh is not sys.modules['posix']
fresh.execv('/usr/bin/touch', ['touch', 'ran_builtin_importer'])
