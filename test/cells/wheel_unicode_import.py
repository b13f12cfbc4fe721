import importlib
importlib.import_module('ci_unicode.d\xe1t\xe1').NAME
