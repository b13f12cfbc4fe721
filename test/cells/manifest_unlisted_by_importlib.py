# loads SITE/unlistedpkg, a package the manifest does not list, by importlib's own machinery
import importlib.util
spec = importlib.util.spec_from_file_location('u', f'{SITE}/unlistedpkg/__init__.py')
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
