"""The cell runner of codeinterp-worker.

It gives a cell notebook semantics (the last expression's value, rich
outputs through IPython's display protocol, the figures left open) and
turns the cell's fate into the fields of a RESULT frame. The worker
embeds this file at build time (tools/embed.sh) and loads it as the
module _codeinterp_runner once, before any session exists; install()
then puts display(), plt.show, exit() and the audit hook in place.

The constants it shares with C come from the built-in module _codeinterp
(lib/worker/interp.c), made from lib/proto.h, so each has one source.
"""
import ast, base64, builtins, gc, io, json, linecache, os, re, struct, sys
import threading, tokenize, traceback
import matplotlib.pyplot as _plt
from matplotlib._pylab_helpers import Gcf as _Gcf
from matplotlib.figure import Figure as _Figure

import _codeinterp as _ci
from _codeinterp import (OUTCOME_OK as OK, OUTCOME_ERROR as ERROR,
                         OUTCOME_MEMORY as MEMORY,
                         OUTCOME_INTERRUPT as INTERRUPT,
                         FLAG_TRUNCATED as TRUNCATED)

_SELF = (lambda: 0).__code__.co_filename
_ns = sys.modules['__main__'].__dict__
_QUIET = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                    tokenize.INDENT, tokenize.DEDENT,
                    tokenize.ENDMARKER})


def _lines(source):
    # Split where the parser counts lines, so linenos index the list.
    return io.StringIO(source, newline=None).readlines()

def _silenced(lines, last):
    # True if the last real token after the last statement is ';'.
    # Only that tail is tokenized: a long cell costs nothing more.
    final = None
    try:
        rest = lines[last.end_lineno - 1].encode()[last.end_col_offset:]
        tail = iter([rest.decode()] + lines[last.end_lineno:])
        for tok in tokenize.generate_tokens(tail.__next__):
            if tok.type not in _QUIET:
                final = tok.string
    except (tokenize.TokenError, SyntaxError, ValueError, IndexError):
        return False
    return final == ';'

def _execute(filename, data):
    source = data.decode('utf-8')
    lines = _lines(source)
    linecache.cache[filename] = (len(source), None, lines, filename)
    try:
        # compile(), not ast.parse(): a SyntaxError gets no ast.py frame
        tree = compile(source, filename, 'exec', ast.PyCF_ONLY_AST, True)
        last = None
        if (tree.body and isinstance(tree.body[-1], ast.Expr)
                and not _silenced(lines, tree.body[-1])):
            last = compile(ast.Expression(tree.body.pop().value), filename,
                           'eval', dont_inherit=True)
        body = compile(tree, filename, 'exec', dont_inherit=True)
    except SyntaxError as e:
        # The compiler (not the parser) leaves out the line's text
        # ('await' outside a function): the traceback shows it from here.
        if (e.text is None and e.filename == filename
                and isinstance(e.lineno, int) and 0 < e.lineno <= len(lines)):
            e.text = lines[e.lineno - 1]
        raise
    exec(body, _ns)
    if last is None:
        return None
    result = eval(last, _ns)
    if result is None:
        return None
    _ns['_'] = result
    if type(result) in _PLAIN:
        return repr(result)
    # Its text/plain is the VALUE (the object's own, as IPython shows
    # it, else repr); the others, if any, are the execute_result.
    data = _bundle(result, False, None, None)
    text = data.pop('text/plain', None)
    if not isinstance(text, str):
        text = repr(result)
    _emit(EXECUTE_RESULT, *_prepare(data))
    return text

def _flush():
    for name in ('stdout', 'stderr', '__stdout__', '__stderr__'):
        try:
            getattr(sys, name).flush()
        except BaseException:
            pass

def _text(s, limit):
    # UTF-8 whatever s holds, NULs spelled out, cut on a character
    # boundary at limit bytes. Returns (bytes, cut).
    b = s[:limit].encode('utf-8', 'backslashreplace')
    b = b.replace(b'\0', b'\\x00')
    if len(s) <= limit and len(b) <= limit:
        return b, False
    return b[:limit].decode('utf-8', 'ignore').encode(), True

def _traceback(exc):
    # The runner's frames go, at the start (run, _execute) and wherever
    # else they stand (the audit hook raises from inside a cell's call).
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == _SELF:
        tb = tb.tb_next
    node = tb
    while node is not None and node.tb_next is not None:
        if node.tb_next.tb_frame.f_code.co_filename == _SELF:
            node.tb_next = node.tb_next.tb_next
        else:
            node = node.tb_next
    return ''.join(traceback.format_exception(type(exc), exc, tb))

# Rich outputs, as IPython's display protocol makes them; _configure()
# sets the limits and the dpi.
DISPLAY_DATA, EXECUTE_RESULT = _ci.OUTPUT_DISPLAY_DATA, _ci.OUTPUT_EXECUTE_RESULT
_MAX_OUTPUTS, _MIME_MAX = _ci.MAX_OUTPUTS, _ci.MIME_MAX
_RICH = (('_repr_png_', 'image/png'), ('_repr_jpeg_', 'image/jpeg'),
         ('_repr_svg_', 'image/svg+xml'), ('_repr_html_', 'text/html'),
         ('_repr_markdown_', 'text/markdown'), ('_repr_latex_', 'text/latex'),
         ('_repr_json_', 'application/json'))
_FIRST = tuple(mime for _, mime in _RICH)
_RANKED = frozenset(_FIRST + ('text/plain',))
# Types with no rich form: a value of one is not even looked at.
_PLAIN = frozenset({int, float, complex, bool, str, bytes, bytearray, list,
                    tuple, dict, set, frozenset, range, type(None)})
_MIME = re.compile(r'[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+').fullmatch
_HEAD = struct.Struct('=IIII').pack
_BIG = object()
# The run's outputs: (data bytes, outputs, messages, omitted, chain), the
# chain a linked list of (previous, header, mime, data). Replaced whole
# by one store, so an interrupt at any point leaves it consistent; the
# lock keeps two threads from replacing each other's.
_EMPTY = (0, 0, 0, 0, None)
_NONE = (b'', 0)
_now = [_EMPTY]
_lock = threading.RLock()
_returned = []  # pyplot figures shown by display() or as the value

def _complain():
    # As IPython: a representation that raised is left out, its
    # traceback printed.
    try:
        sys.stderr.write(_traceback(sys.exc_info()[1]))
    except Exception:
        pass

def _png(fig):
    # As IPython's print_figure: nothing for an empty figure; else at
    # the figure's dpi (rcParams['figure.dpi'] is the configured one),
    # cropped to what is drawn (bbox_inches='tight'), in its colours.
    if not fig.axes and not fig.lines:
        return None
    buf = io.BytesIO()
    fig.savefig(buf, format='png', dpi=fig.dpi, bbox_inches='tight',
                facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())
    return buf.getvalue()

def _bundle(obj, plain, include, exclude):
    # {mime: value} of obj. Methods are looked up on the type, so an
    # object answering every attribute (a proxy, a mock) offers none.
    data = {}
    cls = type(obj)
    if isinstance(obj, _Figure):
        try:
            png = _png(obj)
            if png is not None:
                data['image/png'] = png
        except Exception:
            _complain()
        if any(m.canvas.figure is obj for m in tuple(_Gcf.figs.values())):
            _returned.append(obj)
    elif cls not in _PLAIN:
        if callable(getattr(cls, '_repr_mimebundle_', None)):
            try:
                r = obj._repr_mimebundle_(include=include, exclude=exclude)
                if isinstance(r, tuple) and len(r) == 2:
                    r = r[0]  # (data, metadata)
                if isinstance(r, dict):
                    for k, v in dict.items(r):
                        if type(k) is str and v is not None:
                            data[k] = v
            except Exception:
                _complain()
        for name, mime in _RICH:
            if mime in data or not callable(getattr(cls, name, None)):
                continue
            try:
                v = getattr(obj, name)()
            except Exception:
                _complain()
                continue
            if isinstance(v, tuple) and len(v) == 2:
                v = v[0]  # (data, metadata)
            if v is not None:
                data[mime] = v
    if plain and 'text/plain' not in data:
        try:
            data['text/plain'] = repr(obj)
        except Exception:
            _complain()
    return data

def _is_text(mime):
    # ci_mime_is_text() in proto.h
    return (mime.startswith('text/') or mime == 'application/json'
            or mime.endswith(('+json', '+xml')))

def _encode(mime, v):
    # The bytes of one representation, None to skip it, _BIG if it is
    # over the per-output limit before it is even encoded.
    if _is_text(mime):
        if isinstance(v, (dict, list)) and mime.endswith('json'):
            v = json.dumps(v)
        elif isinstance(v, (bytes, bytearray)):
            if len(v) > _DISPLAY_LIMIT:
                return _BIG
            v = bytes(v).decode('utf-8', 'replace')
        if not isinstance(v, str):
            return None
        if len(v) > _DISPLAY_LIMIT:
            return _BIG
        # As _text: UTF-8 whatever v holds, NULs spelled out.
        b = str.encode(v, 'utf-8', 'backslashreplace')
        return b.replace(b'\0', b'\\x00')
    if isinstance(v, str):
        # Jupyter's JSON convention: binary data travels as base64.
        try:
            return base64.b64decode(v)
        except ValueError:
            return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    return None

def _prepare(data, include=None, exclude=None):
    # The representations to send, richest first, text/plain last, as
    # [(mime, data)] of bytes; and how many are over the per-output limit.
    # MIME types are case-insensitive (RFC 2045): sent in lower case.
    data = {k.lower(): v for k, v in data.items() if isinstance(k, str)}
    if include is not None:
        data = {k: v for k, v in data.items() if k in include}
    if exclude is not None:
        data = {k: v for k, v in data.items() if k not in exclude}
    order = [k for k in _FIRST if k in data]
    order += [k for k in data if k not in _RANKED]
    if 'text/plain' in data:
        order.append('text/plain')
    items, big = [], 0
    for mime in order:
        if len(mime) > _MIME_MAX or not _MIME(mime):
            continue
        try:
            b = _encode(mime, data[mime])
        except Exception:
            _complain()
            continue
        if b is None:
            continue
        if b is _BIG or len(b) > _DISPLAY_LIMIT:
            big += 1
        else:
            items.append((mime.encode('ascii'), b))
    return items, big

def _render(obj, plain, include=None, exclude=None):
    return _prepare(_bundle(obj, plain, include, exclude), include, exclude)

def _emit(kind, items, big):
    # One message: its outputs that fit the run's caps; the rest counted.
    if not items and not big:
        return
    with _lock:
        size, count, messages, omitted, chain = _now[0]
        omitted += big
        kept = 0
        for mime, data in items:
            n = len(data)
            if size + n > _RUN_LIMIT or count >= _MAX_OUTPUTS:
                omitted += 1
                continue
            chain = (chain, _HEAD(kind, messages, len(mime), n), mime, data)
            size, count, kept = size + n, count + 1, 1
        # Only a message with an output kept takes a number.
        _now[0] = (size, count, messages + kept, omitted, chain)

def _take():
    # The run's OUTPUTS field and omitted count; the next run starts
    # afresh (but for what other threads display meanwhile).
    if _now[0] is _EMPTY:
        return _NONE
    with _lock:
        state = _now[0]
        _now[0] = _EMPTY
    parts = []
    node = state[4]
    while node is not None:
        node, head, mime, data = node
        parts += (data, mime, head)
    parts.reverse()
    return b''.join(parts), min(state[3], 0xFFFFFFFF)

def display(*objs, include=None, exclude=None, raw=False, **kwargs):
    """Show each object under the cell, as IPython's display() does.

    Rich representations (_repr_html_, _repr_png_, matplotlib figures...)
    come with text/plain; include and exclude name the MIME types to keep
    or drop; with raw=True each object is a {mime: data} dict already.
    """
    for obj in objs:
        if raw:
            if isinstance(obj, dict):
                data = {k: v for k, v in dict.items(obj) if type(k) is str}
                _emit(DISPLAY_DATA, *_prepare(data, include, exclude))
        else:
            _emit(DISPLAY_DATA, *_render(obj, True, include, exclude))

def _figures():
    # Every open pyplot figure not shown yet, in number order; then all
    # are closed, so none is shown twice or stays for the next cell.
    try:
        for num in _plt.get_fignums():
            manager = _Gcf.figs.get(num)
            fig = manager.canvas.figure if manager is not None else None
            if fig is not None and not any(f is fig for f in _returned):
                _emit(DISPLAY_DATA, *_render(fig, True))
    finally:
        _returned.clear()
        _plt.close('all')

def show(*args, **kwargs):
    """Shows the open figures under the cell now, then closes them."""
    _figures()

_TEXT_FIELDS = (_ci.FIELD_VALUE, _ci.FIELD_ENAME, _ci.FIELD_EVALUE,
                _ci.FIELD_TRACEBACK)

def _report(value, exc, limit):
    # The RESULT's fields of the cell's fate, keyed by their tags; each
    # text as UTF-8 of at most limit bytes, or None.
    if exc is None:
        outcome, texts = OK, [value, None, None, None]
    else:
        name = type(exc).__qualname__
        if isinstance(exc, MemoryError):
            # numpy's _ArrayMemoryError too: the API promises this name;
            # the traceback still names the class.
            outcome, name = MEMORY, 'MemoryError'
        elif isinstance(exc, KeyboardInterrupt):
            outcome = INTERRUPT
        else:
            outcome = ERROR
        try:
            message = str(exc)
        except BaseException:
            message = '<exception str() failed>'
        try:
            tb = _traceback(exc)
        except BaseException:
            tb = None
        texts = [None, name, message, tb]
    fields = {_ci.FIELD_OUTCOME: outcome}
    flags = 0
    for tag, s in zip(_TEXT_FIELDS, texts):
        if s is not None:
            s, cut = _text(s, limit)
            flags |= TRUNCATED if cut else 0
        fields[tag] = s
    fields[_ci.FIELD_FLAGS] = flags
    return fields

# Messages a model can act on. The audit hook raises, before the
# system call, a PermissionError that names the policy; _explain()
# rewrites the kernel's bare refusal of a path outside the session.
# Neither is a boundary: the seccomp filter and Landlock refuse the
# same things with the hook bypassed.
_NET = 'network access is disabled in this sandbox'
_PROC = ('creating processes is disabled in this sandbox'
         ' (subprocess, os.system, os.fork)')
_SIGNAL = 'sending signals to other processes is disabled in this sandbox'
_LINK = ('creating symbolic links is disabled in this sandbox;'
         ' copy the file instead (shutil.copy)')
_PROCESS_EVENTS = frozenset({'subprocess.Popen', 'os.fork', 'os.forkpty',
    'os.posix_spawn', 'os.exec', 'os.spawn', 'pty.spawn'})
_last_open = [None]

def _audit(event, args):
    if event == 'open':
        _last_open[0] = args
    elif event in _PROCESS_EVENTS:
        raise PermissionError(_PROC)
    elif event in ('socket.getaddrinfo', 'socket.gethostbyname',
                   'socket.gethostbyaddr'):
        # A name lookup would only fail, and say less.
        raise PermissionError(_NET)
    elif event == 'socket.__new__':
        # socket.socketpair() and socket.dup() wrap a descriptor they
        # already have (asyncio needs them); anything else would be new.
        f = sys._getframe(1)
        if not (f.f_code.co_name == '__init__'
                and f.f_locals.get('fileno') is not None):
            raise PermissionError(_NET)
    elif event == 'os.kill':
        if args[0] != _PID:
            raise PermissionError(_SIGNAL)
    elif event == 'os.killpg':
        raise PermissionError(_SIGNAL)
    elif event == 'os.symlink':
        raise PermissionError(_LINK)
    elif event == 'os.system':
        # os.system reports failure as a status: keep that, but say why.
        try:
            print(f'os.system: {_PROC}', file=sys.stderr)
        except Exception:
            pass

def _under(path, roots):
    return any(path == r or path.startswith(r.rstrip('/') + '/') for r in roots)

def _explain(exc):
    # A refusal of a path outside the session gets a message naming the
    # policy; its type and traceback stay.
    try:
        if type(exc) not in (PermissionError, FileNotFoundError):
            return exc
        name = exc.filename
        if isinstance(name, bytes):
            name = os.fsdecode(name)
        if not isinstance(name, str) or not name:
            return exc
        path = os.path.abspath(name)
        last = _last_open[0]
        if last is not None and last[0] in (exc.filename, name):
            mode, flags = last[1] or '', last[2] or 0
            write = (any(c in mode for c in 'wax+') or flags &
                     (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC))
        else:
            write = _under(path, _READABLE)
        if (not write and type(exc) is PermissionError and _ci.MANIFEST
                and _under(path, _ci.MANIFEST_DIRS)
                and not _ci.manifest_listed(os.path.realpath(path))):
            msg = (f'the signed package manifest does not list {path};'
                   ' this session reads only the packages it lists')
        elif write and not _under(path, _WRITABLE):
            msg = _WRITE
        elif not write and not _under(path, _READABLE):
            msg = (f'this sandbox can only read the session directories and'
                   f' the Python installation; {path} is outside them')
        else:
            return exc
        new = type(exc)(msg)
        new.errno = exc.errno
        return new.with_traceback(exc.__traceback__)
    except Exception:
        return exc

class _Quitter:
    # exit() and quit() as site's, without closing sys.stdin (fd 0),
    # which would break help() and input() for the rest of the session.
    def __init__(self, name):
        self.name = name
    def __repr__(self):
        return f'Use {self.name}() to raise SystemExit'
    def __call__(self, code=None):
        raise SystemExit(code)

def install():
    # What the runner changes outside itself, once, in the process that
    # loaded it: the builtins a notebook has, pyplot's show(), and the
    # audit hook (which no one can remove again).
    builtins.display = display
    builtins.exit, builtins.quit = _Quitter('exit'), _Quitter('quit')
    _plt.show = show
    sys.addaudithook(_audit)

def _configure(display_limit, run_limit, dpi, env):
    # What belongs to one session, set once in the process that serves
    # it: a zygote loads this runner before any session exists and its
    # children call this after the fork, in their own workspace.
    global _DISPLAY_LIMIT, _RUN_LIMIT, _WS, _TMP, _WRITABLE, _READABLE
    global _WRITE, _PID
    _DISPLAY_LIMIT, _RUN_LIMIT = display_limit, run_limit
    # The configured dpi is every new figure's, as a notebook's default:
    # a cell may still choose its own (plt.figure(dpi=...)).
    _plt.rcParams['figure.dpi'] = dpi
    # Called twice in a zygote's child (ci_interp_prefault): the first
    # call's directory leaves the search path.
    if globals().get('_WS') in sys.path:
        sys.path.remove(_WS)
    _WS = os.getcwd()
    _PID = os.getpid()
    # A zygote's child gets its session's HOME, MPLCONFIGDIR and TMPDIR
    # here (os.environ sets the C environment too).
    for k, v in env.items():
        os.environ[k] = v
    import tempfile
    tempfile.tempdir = None
    # matplotlib memoises its directories at the first call, which a
    # zygote made for its own (removed) one.
    import matplotlib
    _cfg = os.environ.get('MPLCONFIGDIR')
    if _cfg:
        matplotlib.get_configdir = matplotlib.get_cachedir = lambda: _cfg
    # A fork copies every generator's state: each session draws its own
    # numbers. (random reseeds itself after a fork; numpy does not.) The
    # global MT19937's whole state from the kernel: as random as seed()
    # with no argument, without its SeedSequence (a third of a ms).
    np = sys.modules.get('numpy.random')
    if np is not None:
        key = sys.modules['numpy'].frombuffer(os.urandom(2496), dtype='uint32')
        np.set_state(('MT19937', key, 624))
    _TMP = os.environ.get('TMPDIR') or os.path.join(os.path.dirname(_WS), 'tmp')
    _WRITABLE = tuple(os.path.join(os.path.dirname(_WS), d) for d in
                      ('workspace', 'config', 'tmp')) + (_TMP,)
    _READABLE = _WRITABLE + ('/usr', '/lib', '/lib64', '/etc/ld.so.cache',
        '/etc/localtime', '/etc/matplotlibrc', '/etc/mime.types',
        '/sys/devices/system/cpu', '/proc/self', f'/proc/{_PID}',
        '/dev/null', '/dev/zero', '/dev/random', '/dev/urandom')
    _WRITE = ('this sandbox can only write inside the session workspace'
              f' ({_WS}), TMPDIR ({_TMP}) and HOME ({os.environ.get("HOME", "")})')
    # Modules a cell writes into the workspace import as in a notebook,
    # but never shadow the standard library or the installed packages.
    sys.path.append(_WS)

def _rehearse(env):
    # A zygote's spare, before it has a session (ci_interp_prefault):
    # a first cell's path and the session's setup taken once, the cell
    # in a namespace thrown away, so that the pages they write are this
    # process's own before its session's turn.
    global _ns
    cell = (b'import pandas as pd\npd.DataFrame({\'a\': [1, 2]}).a.sum()'
            if 'pandas' in sys.modules else b'x = [1, 2]\nlen(x)')
    main, _ns = _ns, {'__builtins__': builtins}
    try:
        run(0, cell, 1 << 16)
    finally:
        _ns = main
        linecache.cache.pop('<cell 0>', None)
    # Any limits and dpi: the session's call replaces them all.
    _configure(1 << 20, 1 << 22, 100, env)

def _first_frame_and_figure():
    # What a first cell would otherwise build lazily: pandas' first
    # frame, group-by, merge and HTML table, and a first figure rendered
    # to PNG (fonts, the Agg renderer, the tight bounding box). The
    # figure is not pyplot's, so a session's first figure is still 1.
    pd = sys.modules.get('pandas')
    if pd is not None:
        df = pd.DataFrame({'k': ['a', 'b', 'a'], 'v': [1.0, 2.0, 3.0]})
        df.groupby('k').v.sum()
        df.merge(df, on='k').describe()
        repr(df), df._repr_html_()
    fig = _Figure()
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label='x')
    ax.set_title('x')
    ax.legend()
    fig.savefig(io.BytesIO(), format='png', bbox_inches='tight')

def prime():
    # A zygote's warm-up, once for all its children. Then what it made
    # is frozen: the children share the zygote's pages until they write
    # them, and the cyclic collector writes to every object it visits,
    # so a full collection in one child would copy nearly all of them.
    # Frozen, they are never visited again (gc.freeze(), made for this,
    # as the gc module's documentation says).
    _first_frame_and_figure()
    gc.collect()
    gc.freeze()

def run(count, data, limit):
    # Runs cell number count, its UTF-8 source data, and returns the
    # fields of its RESULT as a dict keyed by their tags (_report's, and
    # FIELD_OUTPUTS, the OUTPUTS payload as bytes, and FIELD_OMITTED).
    # Raises only if interrupted or out of memory while reporting.
    try:
        value, exc = _execute(f'<cell {count}>', data), None
    except BaseException as e:
        value, exc = None, _explain(e)
    # The figures left open, whatever became of the cell; an interrupt
    # while drawing them is the cell's fate if it had none.
    if _Gcf.figs:
        try:
            _figures()
        except BaseException as e:
            if exc is None:
                value, exc = None, e
    elif _returned:
        _returned.clear()
    try:
        _flush()
        outputs, omitted = _take()
        fields = _report(value, exc, limit)
        fields[_ci.FIELD_OUTPUTS] = outputs
        fields[_ci.FIELD_OMITTED] = omitted
        return fields
    finally:
        # The exception's frames may hold the cell's big locals: drop
        # them now, and collect cycles after a MemoryError.
        low = isinstance(exc, MemoryError)
        del value, exc
        if low:
            gc.collect()
