"""Unit tests of the worker's Python files, outside any worker.

The worker gives its Python the built-in module _codeinterp
(lib/worker/pymodule.c). Here the same module is made from the same
sources: the names come from pymodule.c's CONSTANT() list and the values
from lib/proto.h and include/codeinterp.h, so a constant that C and
Python disagree on, or that one side lacks, fails the tests. Then the
worker's modules are imported in the worker's order and under its names,
IPython's shell made over a namespace of its own (not pytest's
__main__), and the runner installed but for its audit hook, which would
stay in pytest itself.
"""
import importlib.util
import os
import re
import sys
import types

import matplotlib

matplotlib.use('Agg')

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def _read(*parts):
    with open(os.path.join(TOP, *parts), encoding='utf-8') as f:
        return f.read()


def c_constants():
    """{C name: value} of every enumerator and integer #define in the
    two headers the worker's constants come from."""
    values = {}
    for text in (_read('lib', 'proto.h'), _read('include', 'codeinterp.h')):
        for name, value in re.findall(r'^#define (CI_\w+) \(?(\d+)u?\)?\s*(?:/\*.*)?$',
                                      text, re.M):
            values[name] = int(value)
        for name, value in re.findall(r'\b(CI_\w+) = (\d+)u?\b', text):
            values[name] = int(value)
    return values


def exported_constants():
    """The C names pymodule.c exports, in its order."""
    return re.findall(r'^\s*CONSTANT\((CI_\w+)\),', _read('lib', 'worker', 'pymodule.c'), re.M)


def _fake_codeinterp():
    m = types.ModuleType('_codeinterp')
    values = c_constants()
    for name in exported_constants():
        setattr(m, name[3:], values[name])
    m.MANIFEST = False
    m.MANIFEST_DIRS = ()
    return m


def _load(name, *parts):
    spec = importlib.util.spec_from_file_location(name, os.path.join(TOP, *parts))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sys.modules.setdefault('_codeinterp', _fake_codeinterp())
outputs = _load('_codeinterp_outputs', 'lib', 'worker', 'outputs.py')
refusals = _load('_codeinterp_refusals', 'lib', 'worker', 'refusals.py')
functions = _load('_codeinterp_functions', 'lib', 'worker', 'functions.py')
fetch = _load('_codeinterp_fetch', 'lib', 'worker', 'fetch.py')
stdin = _load('_codeinterp_stdin', 'lib', 'worker', 'stdin.py')
pip = _load('_codeinterp_pip', 'lib', 'worker', 'pip.py')
shell = _load('_codeinterp_shell', 'lib', 'worker', 'shell.py')
main = types.ModuleType('__main__')
ipython = shell.create(main)
tracebacks = _load('_codeinterp_tracebacks', 'lib', 'worker', 'tracebacks.py')
runner = _load('_codeinterp_runner', 'lib', 'worker', 'runner.py')
snapshot = _load('_codeinterp_snapshot', 'lib', 'worker', 'snapshot.py')
refusals.install = lambda: None
runner.install()
