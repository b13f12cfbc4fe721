"""Session snapshots inside codeinterp-worker: the interpreter's part.

take() pickles what the cells made and can name again: the variables of
the user namespace (functions, lambdas and classes defined in cells
included, by value, as dill pickles what __main__ defines), the output
history Out with _N, the input history In with _iN, the execution count,
and the state of the random and numpy.random generators. What cannot be
carried (a generator in flight, a file object, open or closed, a socket,
a thread, anything pickle refuses) is left out and named, never dropped in silence.
restore() loads such a state into a fresh worker, after checking that it
has the package set the snapshot was taken with.

The host never reads the pickle (docs/snapshot-format.md): it carries the
bytes, and only a worker, locked down as for any cell and within a cell's
time limit, loads them, so a forged snapshot can do what a cell can do
and nothing more.

Loaded by the worker (lib/worker/interp.c) as _codeinterp_snapshot,
after the runner, whose shell, namespace and report it uses.
"""
import io, os, pickle, platform, re, sys, types

import _codeinterp as _ci
import _codeinterp_outputs as _out
import _codeinterp_refusals as _refusals
import _codeinterp_runner as _runner

try:
    # At load, so that a zygote's children share it; a session whose
    # signed manifest leaves it out can take no snapshot, and says so.
    import dill
except ImportError:
    dill = None

_shell = _runner._shell
_ns = _runner._ns
FORMAT = 2
_NORMAL = re.compile(r'[-_.]+')

# The namespace's entries that IPython and the runner keep, not a cell:
# the history is carried as In and Out and its names made again from them.
_KEPT = frozenset({
    '__builtins__', '__builtin__', '__name__', '__doc__', '__package__',
    '__loader__', '__spec__', 'In', 'Out', '_ih', '_oh', '_dh', 'get_ipython',
    'exit', 'quit', '_', '__', '___', '_i', '_ii', '_iii', '_i00',
})


def _history_name(name):
    # _N and _iN, the history's names for cell N.
    rest = name[2:] if name.startswith('_i') else name[1:]
    return name.startswith('_') and rest.isdigit()


class NotCarried(Exception):
    """An object a snapshot cannot carry, with the reason."""


def _why_not(obj):
    # Why @obj cannot be carried, or None. Checked for every object the
    # pickler meets, so a generator inside a list is found too.
    if isinstance(obj, (types.GeneratorType, types.AsyncGeneratorType)):
        return 'a generator in flight'
    if isinstance(obj, types.CoroutineType):
        return 'a coroutine in flight'
    if isinstance(obj, io.IOBase):
        return 'a closed file' if obj.closed else 'an open file'
    for module, name, what in (('socket', 'socket', 'an open socket'),
                               ('threading', 'Thread', 'a thread'),
                               ('mmap', 'mmap', 'a memory map')):
        kind = getattr(sys.modules.get(module), name, None)
        if isinstance(kind, type) and isinstance(obj, kind):
            return what
    return None


def _dill():
    if dill is None:
        raise SnapshotError('snapshots need dill (python3-dill), which this worker cannot '
                            'import')
    return dill


def _pickler_class():
    class Pickler(_dill().Pickler):
        # The top-level modules whose names the pickles use (a class, a
        # function, a module by reference): the distributions providing
        # them are the package set the state needs.
        modules = None

        def reducer_override(self, obj):
            if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType,
                                types.ModuleType)):
                name = obj.__name__ if isinstance(obj, types.ModuleType) else obj.__module__
                if isinstance(name, str):
                    if self.modules is None:
                        self.modules = set()
                    self.modules.add(name.partition('.')[0])
            why = None if isinstance(obj, type) else _why_not(obj)
            if why is not None:
                raise NotCarried(why)
            return NotImplemented
    return Pickler


class _Sink:
    # A file that keeps nothing: a trial pickle of one entry.
    def write(self, data):
        return len(data)


def _dump(pickler, obj, out):
    pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)


def _reason(e):
    if isinstance(e, NotCarried):
        return str(e)
    text = f'{type(e).__name__}: {e}'.replace('\n', ' ')
    return text if len(text) <= 200 else text[:197] + '...'


def _search_path():
    # sys.path but the session's own directories: the workspace (its
    # modules are files of the snapshot) and the site directory of
    # %pip install (not carried: installed(), below).
    own = {_runner._WS, _runner._SITE}
    return [p for p in sys.path if p and os.path.abspath(p) not in own]


def installed():
    """The lines naming what %pip installed into the session's site
    directory: a snapshot does not carry it, and a restored session
    installs it again."""
    site = _runner._SITE
    try:
        entries = sorted(os.listdir(site)) if site else []
    except OSError:
        entries = []
    return [f'{name}: installed with %pip, not carried (install it again)'
            for name in entries if name.endswith('.dist-info')]


def _interpreter():
    return f'python {platform.python_version()} {sys.implementation.cache_tag} {platform.machine()}'


def _top_levels(path):
    # The top-level modules of the distribution whose *.dist-info or
    # *.egg-info is @path: its top_level.txt, else the first part of each
    # path its RECORD lists; none if it has neither.
    names = set()
    try:
        with open(os.path.join(path, 'top_level.txt'), encoding='utf-8') as f:
            return {line.strip() for line in f if line.strip()}
    except OSError:
        pass
    try:
        with open(os.path.join(path, 'RECORD'), encoding='utf-8') as f:
            for line in f:
                first = line.split(',', 1)[0].split('/', 1)[0]
                if first and not first.endswith(('.dist-info', '.data')) and first != '..':
                    names.add(first.split('.', 1)[0])
    except OSError:
        pass
    return names


def _distributions():
    # {normalized name: (version, the path of its metadata)} of the
    # distributions on the search path but the session's own directories
    # (_search_path), the first of each name; the name and version those
    # of the metadata's own name (name-version[-pyX.Y]), as the packaging
    # tools write it (reading each one's METADATA would cost a fifth of a
    # second).
    found = {}
    for where in _search_path():
        try:
            entries = os.listdir(where)
        except OSError:
            continue
        for entry in entries:
            stem, dot, kind = entry.rpartition('.')
            if dot and kind in ('dist-info', 'egg-info'):
                name, _, rest = stem.partition('-')
                if name and rest:
                    # Normalized as PEP 503 does: a directory spells
                    # "charset_normalizer", METADATA "charset-normalizer".
                    key = _NORMAL.sub('-', name).lower()
                    found.setdefault(key, (rest.split('-')[0], os.path.join(where, entry)))
    return found


_provided = (None, None)  # (the search path's directories and times, {name: (version, tops)})


def _provides():
    # {name: (version, top-level modules)} of the distributions on the
    # search path, read again only when one of its directories changed.
    global _provided
    key = []
    for where in _search_path():
        try:
            key.append((where, os.stat(where).st_mtime_ns))
        except OSError:
            pass
    if _provided[0] != key:
        # Metadata that says nothing of its modules (an *.egg-info file,
        # as dill's) stands for the module of the distribution's name.
        _provided = (key, {name: (version, _top_levels(path) or {name.replace('-', '_')})
                           for name, (version, path) in _distributions().items()})
    return _provided[1]


def packages(modules=None):
    """The package set a state needs: Python's version and platform, then
    one "name version" line, sorted, for each distribution that provides
    one of the top-level @modules the state's pickles refer to (every
    distribution on the search path if @modules is None)."""
    lines = {f'{name} {version}' for name, (version, tops) in _provides().items()
             if modules is None or tops & modules}
    return '\n'.join([_interpreter()] + sorted(lines)) + '\n'


def _names():
    hidden = _shell.user_ns_hidden
    for name, value in _ns.items():
        if name in _KEPT or _history_name(name):
            continue
        if name in hidden and hidden[name] is value:
            continue
        yield name, value


def _generators():
    state = {}
    rnd = sys.modules.get('random')
    if rnd is not None:
        state['random'] = rnd.getstate()
    nprnd = sys.modules.get('numpy.random')
    if nprnd is not None:
        state['numpy.random'] = nprnd.get_state()
    return state


def _head():
    history = _shell.history_manager
    return {
        'format': FORMAT,
        'in': (list(history.input_hist_parsed), list(history.input_hist_raw)),
        'count': _shell.execution_count,
        'generators': _generators(),
    }


def _entries():
    # (kind, key, value) of every variable, the definitions first
    # (classes, functions, modules), then Out's entries: loaded in this
    # order, a value whose rebuilding calls a cell's function finds the
    # names that function uses already in place.
    names = list(_names())
    defined = (type, types.FunctionType, types.ModuleType)
    for first in (True, False):
        for name, value in names:
            if isinstance(value, defined) == first:
                yield 'name', name, value
    out = _ns.get('_oh')
    for key, value in (out.items() if isinstance(out, dict) else ()):
        yield 'out', key, value


def _label(kind, key):
    # A name may hold any character: one that is not printable reads as
    # '?', so that no name looks like two lines of the list.
    text = f'Out[{key}]' if kind == 'out' else str(key)
    return ''.join(c if c.isprintable() else '?' for c in text)


class _Failed(Exception):
    """An entry of the stream that could not be pickled."""

    def __init__(self, entry, error):
        super().__init__(entry, error)
        self.entry, self.error = entry, error


def _stream(pickler, head, entries, skip):
    # The state: a stream of pickles made by one pickler, so that one
    # memo keeps the objects they share shared: the head, then one
    # (kind, key, value) for each entry not in @skip, then None. Raises
    # _Failed naming the first entry that cannot be pickled.
    out = io.BytesIO()
    p = pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    p.dump(head)
    for entry in entries:
        if entry[:2] not in skip:
            try:
                p.dump(entry)
            except Exception as e:
                raise _Failed(entry, e) from None
    p.dump(None)
    return out.getvalue(), p.modules or set()


def _pickled():
    # (the state, the top-level modules it names, the lines naming what
    # was left out)
    pickler = _pickler_class()
    head, entries = _head(), list(_entries())
    try:
        return (*_stream(pickler, head, entries, ()), [])
    except _Failed as failed:
        first = failed
    # The stream stopped at its first entry that cannot be carried:
    # those after it are tried alone, then the stream made once more
    # without them (a pickler that failed cannot go on).
    at = entries.index(first.entry)
    left = [f'{_label(*first.entry[:2])}: {_reason(first.error)}']
    skip = {first.entry[:2]}
    for kind, key, value in entries[at + 1:]:
        try:
            _dump(pickler, value, _Sink())
        except Exception as e:
            left.append(f'{_label(kind, key)}: {_reason(e)}')
            skip.add((kind, key))
    return (*_stream(pickler, head, entries, skip), left)


def _fields(exc, limit):
    # A RESULT's fields as the runner's run() gives them, for @exc or
    # success; what a pickle displayed is dropped.
    fields = _runner._report(None, exc, limit)
    _out.take()
    fields[_ci.FIELD_OUTPUTS] = b''
    fields[_ci.FIELD_OMITTED] = 0
    fields[_ci.FIELD_REFUSALS] = _refusals.take()
    return fields


def take(limit):
    """The fields of a SNAPSHOT run's RESULT (lib/proto.h): on success
    FIELD_STATE (the pickle), FIELD_PACKAGES and FIELD_LEFT_OUT (one
    "name: reason" line each, or None)."""
    try:
        state, modules, left = _pickled()
        # dill too: a restore loads through its names.
        pkgs = packages(modules | {'dill'}).encode()
        left += installed()
    except _Failed as e:
        return _fields(e.error, limit)
    except BaseException as e:
        # KeyboardInterrupt (the timeout, ci_session_interrupt) and
        # MemoryError too: the RESULT says which.
        return _fields(e, limit)
    fields = _fields(None, limit)
    fields[_ci.FIELD_STATE] = state
    fields[_ci.FIELD_PACKAGES] = pkgs
    fields[_ci.FIELD_LEFT_OUT] = ''.join(line + '\n' for line in left).encode() or None
    return fields


class SnapshotError(Exception):
    """A snapshot that this worker cannot restore."""


def _compare(wanted):
    # Each line of the snapshot's set must hold here: the interpreter,
    # and each distribution at its version (others may be installed too).
    lines = wanted.splitlines()
    have = {name: version for name, (version, tops) in _provides().items()}
    diff = []
    if not lines or lines[0] != _interpreter():
        diff.append(f"{lines[0] if lines else 'no interpreter'} in the snapshot, "
                    f"{_interpreter()} here")
    for line in lines[1:]:
        name, _, version = line.partition(' ')
        if have.get(name) != version:
            diff.append(f"{name} {version} in the snapshot, {have.get(name, 'absent')} here")
    if not diff:
        return
    more = f'; and {len(diff) - 8} more' if len(diff) > 8 else ''
    raise SnapshotError('the snapshot was taken with another package set: '
                        + '; '.join(diff[:8]) + more
                        + ' (a state restores where the distributions it uses are installed '
                        'at the same versions)')


def _unpickler_class():
    # pickle's C unpickler, with dill's names: what dill.loads does with
    # the pure-Python one, many times faster on a large state. (dill's
    # modules must be imported for the names its pickles use.)
    _dill()

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if (module, name) == ('__builtin__', '__main__'):
                return sys.modules['__main__'].__dict__
            if (module, name) == ('__builtin__', 'NoneType'):
                return type(None)
            return super().find_class('dill._dill' if module == 'dill.dill' else module, name)
    return Unpickler


def _refused():
    return SnapshotError('the interpreter state is not one this worker reads')


def _load(state):
    # Loads the stream of _stream(): each variable goes into the
    # namespace as soon as it is loaded; returns the head and Out's
    # entries.
    data = io.BytesIO(state)
    unpickler = _unpickler_class()(data)
    head = unpickler.load()
    if not isinstance(head, dict) or head.get('format') != FORMAT:
        raise _refused()
    count, inputs, generators = head.get('count'), head.get('in'), head.get('generators')
    if (type(count) is not int or not isinstance(generators, dict)
            or not (isinstance(inputs, tuple) and len(inputs) == 2)):
        raise _refused()
    out, last = {}, None
    while True:
        try:
            entry = unpickler.load()
        except Exception as e:
            after = f' (the variable after {last!r})' if last else ''
            hint = ''
            if isinstance(e, ModuleNotFoundError) and e.name == 'codeinterp_host':
                hint = ('; it holds a host function this session does not have: give it the '
                        'functions of the session the snapshot was taken in')
            raise SnapshotError(f'a variable could not be loaded{after}: '
                                f'{type(e).__name__}: {e}{hint}') from None
        if entry is None:
            break
        if not (isinstance(entry, tuple) and len(entry) == 3):
            raise _refused()
        kind, key, value = entry
        last = key if kind == 'name' else last
        if kind == 'name' and type(key) is str:
            _ns[key] = value
        elif kind == 'out' and type(key) is int:
            out[key] = value
        else:
            raise _refused()
    if data.read(1):
        raise SnapshotError('the interpreter state has bytes after its end')
    return out, count, inputs, generators


def _restore_history(out, count, inputs):
    history = _shell.history_manager
    parsed, raw = inputs
    history.input_hist_parsed[:] = [str(x) for x in parsed]
    history.input_hist_raw[:] = [str(x) for x in raw]
    raws = history.input_hist_raw
    names = {f'_i{n}': text for n, text in enumerate(raws) if n}
    # _i, _ii and _iii as the last cell left them, and _i00 (that cell's
    # own input) for the next cell's shift (runner.py's _remember).
    back = [raws[-k] if len(raws) > k else '' for k in (1, 2, 3, 4)]
    kept = history._trait_values
    kept['_i00'], kept['_i'], kept['_ii'], kept['_iii'] = back
    names.update({'_i': back[1], '_ii': back[2], '_iii': back[3]})
    oh = _ns.get('_oh')
    if isinstance(oh, dict):
        oh.clear()
        oh.update(out)
    names.update({f'_{n}': v for n, v in out.items() if type(n) is int})
    last = [out[n] for n in sorted(n for n in out if type(n) is int)][-3:]
    hook = _shell.displayhook
    for attr, value in zip(('_', '__', '___'), reversed(last)):
        names[attr] = value
        setattr(hook, attr, value)
    _ns.update(names)
    _shell.user_ns_hidden.update(names)
    _shell._trait_values['execution_count'] = count


def _restore_generators(generators):
    if 'random' in generators:
        import random
        random.setstate(generators['random'])
    if 'numpy.random' in generators:
        import numpy.random
        numpy.random.set_state(generators['numpy.random'])


def restore(packages, state, limit):
    """The fields of a RESTORE run's RESULT: @packages and @state are
    the RUN payload's package set and pickles (lib/proto.h; both empty if
    the payload was cut). A restore that fails leaves the namespace with
    what loaded before the failure: the host then frees the session."""
    try:
        if not packages or not state:
            raise SnapshotError('the snapshot has no package set or no state')
        _compare(packages.decode('utf-8', 'replace'))
        out, count, inputs, generators = _load(state)
        _restore_generators(generators)
        _restore_history(out, count, inputs)
    except BaseException as e:
        return _fields(e, limit)
    return _fields(None, limit)
