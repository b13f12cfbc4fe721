"""The cell runner of codeinterp-worker.

It gives a cell a notebook's semantics, as an IPython kernel does: a
cell of plain Python is compiled as it is, and only one that is not
goes through IPython's transformation (magics, `!cmd`, `obj?`, pasted
prompts); top-level await runs on one event loop that lives across
cells; the last expression's value is formatted by IPython's
DisplayFormatter, its text/plain the VALUE and the rest an
execute_result, and kept in Out, _ and _N; the figures left open are
shown. Then it turns the cell's fate into the fields of a RESULT frame.

The worker embeds this file at build time (tools/embed.sh) and loads it
as the module _codeinterp_runner once, before any session exists, after
_codeinterp_outputs, _codeinterp_refusals, _codeinterp_stdin,
_codeinterp_shell (whose shell was made before the preloaded packages)
and _codeinterp_tracebacks; install() then puts display(), input(), plt.show, exit() and the audit
hook in place. The constants
it shares with C come from the built-in module _codeinterp
(lib/worker/interp.c), made from lib/proto.h.
"""
import ast, builtins, gc, inspect, io, linecache, os, sys, tokenize
import matplotlib.pyplot as _plt
from matplotlib._pylab_helpers import Gcf as _Gcf
from matplotlib.figure import Figure as _Figure
from matplotlib_inline.config import InlineBackend as _InlineBackend
from IPython.core.error import UsageError
from IPython.core.pylabtools import print_figure
from IPython.lib.pretty import _repr_pprint

import _codeinterp as _ci
import _codeinterp_outputs as _out
import _codeinterp_refusals as _refusals
import _codeinterp_shell as _shellmod
import _codeinterp_tracebacks as _tb
from _codeinterp import (OUTCOME_OK as OK, OUTCOME_ERROR as ERROR,
                         OUTCOME_MEMORY as MEMORY,
                         OUTCOME_INTERRUPT as INTERRUPT,
                         FLAG_TRUNCATED as TRUNCATED)

_SELF = (lambda: 0).__code__.co_filename
_shell = _shellmod.Shell.instance()
_ns = _shell.user_ns
_QUIET = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                    tokenize.INDENT, tokenize.DEDENT,
                    tokenize.ENDMARKER})
_AWAIT = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_WS = None  # the session's workspace, once _configure() has run
_SITE = None  # and its site directory, if it has one (a wheelhouse)


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


def _parse(source, filename):
    # The cell's tree and the Python it was parsed from: the cell itself
    # when it is Python, else IPython's transformation of it (a cell
    # that parses pays nothing for IPython's syntax). Of IPython's syntax
    # only a pasted "In [1]:" prompt is also Python (an annotation).
    error = None
    if 'In [' not in source:
        try:
            tree = compile(source, filename, 'exec', ast.PyCF_ONLY_AST | _AWAIT, True)
            if not _automagic(tree):
                return tree, source
        except SyntaxError as e:
            error = e
    try:
        python = _shell.transform_cell(source)
    except Exception:
        python = source
    if error is not None and python.rstrip('\n') == source.rstrip('\n'):
        raise error
    return compile(python, filename, 'exec', ast.PyCF_ONLY_AST | _AWAIT, True), python


def _automagic(tree):
    # A cell of one bare name that is no variable but a line magic's
    # (pwd, who, ls): IPython's automagic makes it the magic's call.
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return False
    node = tree.body[0].value
    return (isinstance(node, ast.Name) and node.id not in _ns
            and not hasattr(builtins, node.id) and _shell.automagic
            and _shell.find_line_magic(node.id) is not None)


# The history, as IPython's HistoryManager.store_inputs and
# DisplayHook.update_user_ns keep it, in their own lists and attributes,
# but written as plain values: traitlets' validation and notifications
# would cost a trivial cell more than all the rest of its run.
# (HasTraits._trait_values is where traitlets keeps a trait's value.)

def _remember(count, python, raw):
    # In, _i, _ii, _iii and _iN before cell count runs (In[N] is cell N
    # when the host's counts have gaps too); the shell's execution_count.
    history = _shell.history_manager
    parsed, raws = history.input_hist_parsed, history.input_hist_raw
    while len(parsed) < count:
        parsed.append('')
        raws.append('')
    python, raw = python.rstrip('\n'), raw.rstrip('\n')
    parsed.append(python)
    raws.append(raw)
    i, ii, i00 = history._i, history._ii, history._i00
    kept = history._trait_values
    kept['_iii'], kept['_ii'], kept['_i'], kept['_i00'] = ii, i, i00, raw
    names = {'_i': i00, '_ii': i, '_iii': ii, f'_i{count}': raw}
    _ns.update(names)
    _shell.user_ns_hidden.update(names)
    _shell._trait_values['execution_count'] = count


def _keep_output(result, count):
    # Out[count], _count, and _, __, ___ (unless a cell assigned one of
    # them, or '_' is a builtin), culling Out past the cache size.
    hook = _shell.displayhook
    out = _ns.get('_oh')
    if not hook.cache_size or result is out:
        return
    if out is not None and len(out) >= hook.cache_size and hook.do_full_cache:
        hook.cull_cache()
    update = all(getattr(hook, u) is _ns[u] for u in ('_', '__', '___') if u in _ns)
    hook.___, hook.__, hook._ = hook.__, hook._, result
    names = {}
    if update and '_' not in builtins.__dict__:
        names = {'_': result, '__': hook.__, '___': hook.___}
    if hook.do_full_cache:
        names[f'_{count}'] = result
        if out is not None:
            out[count] = result
    _ns.update(names)
    _shell.user_ns_hidden.update(names)


def _event_loop():
    # The main thread's current loop, which asyncio makes when first
    # asked (so a task a cell starts without awaiting lands there too);
    # a new one if a cell closed it or asyncio.run() unset it.
    import asyncio
    policy = asyncio.get_event_loop_policy()
    try:
        loop = policy.get_event_loop()
    except RuntimeError:
        loop = None
    if loop is None or loop.is_closed():
        loop = policy.new_event_loop()
        policy.set_event_loop(loop)
    return loop


def _run(code):
    # A code object with top-level await is a coroutine to drive to its
    # end on the session's loop, where the tasks it starts live on, as
    # IPython's autoawait does.
    if not code.co_flags & inspect.CO_COROUTINE:
        return eval(code, _ns)
    return _event_loop().run_until_complete(eval(code, _ns))


def _execute(count, filename, data):
    raw = data.decode('utf-8')
    try:
        tree, python = _parse(raw, filename)
    except SyntaxError as e:
        lines = _lines(raw)
        linecache.cache[filename] = (len(raw), None, lines, filename)
        if count:
            _remember(count, raw, raw)
        # The compiler (not the parser) leaves out the line's text: the
        # traceback shows it from here.
        if (e.text is None and e.filename == filename
                and isinstance(e.lineno, int) and 0 < e.lineno <= len(lines)):
            e.text = lines[e.lineno - 1]
        raise
    lines = _lines(python)
    linecache.cache[filename] = (len(python), None, lines, filename)
    if count:
        _remember(count, python, raw)
    last = None
    if (tree.body and isinstance(tree.body[-1], ast.Expr)
            and not _silenced(lines, tree.body[-1])):
        last = compile(ast.Expression(tree.body.pop().value), filename, 'eval', _AWAIT, True)
    _run(compile(tree, filename, 'exec', _AWAIT, True))
    if last is None:
        return None
    return _value(_run(last), count)


# How a value is formatted, decided once per type (and again whenever a
# formatter's printers change: for_type adds to them in place, so their
# sizes are compared, and traitlets tells when one is replaced):
#   'repr'   its only representation is text/plain, and IPython's pretty
#            printer would give its repr(): int, str, a numpy scalar;
#   'plain'  its only representation is text/plain, by the pretty printer:
#            a list, a dict;
#   None     anything else, through the DisplayFormatter, as in IPython.
# Formatting a numpy scalar through every formatter costs some 140 µs.
_kinds = {}
_watch = {'formatters': None, 'dicts': None, 'key': None, 'singletons': False}


def _forget_printers(change=None):
    # A formatter, or a formatter's printers, replaced (traitlets tells).
    _watch['dicts'] = None


def _watch_printers():
    display = _shell.display_formatter
    formatters = list(display.formatters.values()) + [
        display.mimebundle_formatter, display.ipython_display_formatter]
    for f in formatters:
        f.observe(_forget_printers, names=['type_printers', 'deferred_printers',
                                           'singleton_printers', 'pprint', 'enabled'])
    display.observe(_forget_printers, names=['formatters', 'mimebundle_formatter',
                                             'ipython_display_formatter'])
    _watch.update(formatters=formatters, table=display.formatters, dicts=tuple(
        d for f in formatters
        for d in (f.type_printers, f.deferred_printers, f.singleton_printers)))


def _printers_changed():
    if _watch['dicts'] is None or len(_watch['table']) != len(_watch['formatters']) - 2:
        _watch_printers()
    key = sum(map(len, _watch['dicts']))
    if key == _watch['key']:
        return False
    _watch['key'] = key
    _watch['singletons'] = any(f.singleton_printers for f in _watch['formatters'])
    _kinds.clear()
    return True


def _classify(t):
    # As DisplayFormatter.format and RepresentationPrinter.pretty would
    # decide for a value of type t that has no attributes of its own.
    if hasattr(t, '__getattr__'):
        return None
    plain = _watch['table']['text/plain']
    for f in _watch['formatters']:
        if f is plain or not f.enabled:
            continue
        try:
            f.lookup_by_type(t)
            return None
        except KeyError:
            pass
        if getattr(t, f.print_method, None) is not None:
            return None
    if not plain.enabled:
        return None
    if not plain.pprint:
        return 'repr'
    for cls in t.__mro__:
        if cls in plain.type_printers:
            return 'repr' if plain.type_printers[cls] is _repr_pprint else 'plain'
        if (cls.__module__, cls.__name__) in plain.deferred_printers:
            return 'plain'
        if '_repr_pretty_' in cls.__dict__:
            return 'plain'
        if cls is not object and callable(cls.__dict__.get('__repr__')):
            return 'repr'
    return 'plain'


def _kind(result):
    _printers_changed()
    if hasattr(result, '__dict__'):
        return None  # attributes of its own could be _repr_*_ methods
    kind = _kinds.get(type(result), 0)
    if kind == 0:
        kind = _kinds[type(result)] = _classify(type(result))
    if kind is not None and _watch['singletons']:
        plain = _watch['table']['text/plain']
        for f in _watch['formatters']:
            printer = f.singleton_printers.get(id(result))
            if printer is not None and f is not plain:
                return None
            if printer is not None:
                return 'repr' if printer is _repr_pprint else 'plain'
    return kind


def _text_only(result):
    # The value's text/plain when that is its only representation, else
    # None. A repr() that raises is left to the formatter, which shows it.
    kind = _kind(result)
    try:
        if kind == 'repr':
            return '\n'.join(repr(result).splitlines())
        if kind == 'plain':
            return _watch['table']['text/plain'](result)
    except Exception:
        pass
    return None


def _value(result, count):
    # The text/plain of the last expression's value is the VALUE; its
    # other forms, if any, are the execute_result; Out[count], _ and _N
    # keep it, as IPython's display hook does.
    if result is None:
        return None
    text = _text_only(result)
    if text is None:
        data, _ = _shell.display_formatter.format(result)
        text = data.pop('text/plain', None)
        _out.emit(_out.EXECUTE_RESULT, *_out.prepare(data, _shell.complain))
    if count:
        _keep_output(result, count)
        _shell.keep_result(result)
    return text if isinstance(text, str) else None


def _flush():
    for name in ('stdout', 'stderr', '__stdout__', '__stderr__'):
        try:
            getattr(sys, name).flush()
        except BaseException:
            pass


_text = _out.cut_middle


def _tracebacks(exc):
    # (folded, full): exc's traceback as a model should read it, and
    # whole (tracebacks.py). The embedded modules' frames go from every
    # part, wherever they stand (run and _execute at the start; the audit
    # hook raises from inside a cell's call). A refusal by design keeps
    # only the cell's frames, a UsageError none, as IPython shows it.
    if isinstance(exc, UsageError):
        text = f'UsageError: {exc}\n'
        return text, text
    refused = isinstance(exc, _refusals.Refused)

    def hide(frame):
        name = frame.filename
        return name == _SELF or (refused and not name.startswith('<cell '))

    # %xmode Minimal: the exception's line alone.
    tb = None if _shell.InteractiveTB.mode == 'Minimal' else exc.__traceback__
    return _tb.texts(exc, tb, hide, lambda frame: _tb.own(frame.filename, _WS))


def _traceback(exc):
    return _tracebacks(exc)[0]


def _complain():
    # As IPython: a representation that raised is left out, its
    # traceback printed.
    try:
        sys.stderr.write(_traceback(sys.exc_info()[1]))
    except Exception:
        pass


# ------------------------------------------------------------ figures
_returned = []  # pyplot figures shown by display() or as the value


def _figure_formatter(fmt, kwargs):
    # The formatter of one of InlineBackend.figure_formats: as IPython's
    # inline backend, at the figure's dpi (rcParams['figure.dpi'] is the
    # configured one), cropped to what is drawn, in its colours; nothing
    # for an empty figure. A pyplot figure whose image it made is not
    # shown again when the cell ends (an empty one is, its text alone, as
    # the inline backend shows it).
    def render(fig):
        data = print_figure(fig, fmt, **kwargs)
        if data is not None and any(m.canvas.figure is fig for m in tuple(_Gcf.figs.values())):
            if not any(f is fig for f in _returned):
                _returned.append(fig)
        return data
    return render


_FIGURE_MIMES = {'png': 'image/png', 'retina': 'image/png', 'png2x': 'image/png',
                 'jpeg': 'image/jpeg', 'jpg': 'image/jpeg', 'svg': 'image/svg+xml',
                 'pdf': 'application/pdf'}


def _use_figure_formats(formats, kwargs):
    formatters = _shell.display_formatter.formatters
    for mime in set(_FIGURE_MIMES.values()):
        formatters[mime].pop(_Figure, None)
    for fmt in formats:
        mime = _FIGURE_MIMES.get(fmt)
        if mime is None:
            raise ValueError(f'supported figure formats are {sorted(_FIGURE_MIMES)}, not {fmt!r}')
        fmt = 'retina' if fmt == 'png2x' else 'jpeg' if fmt == 'jpg' else fmt
        formatters[mime].for_type(_Figure, _figure_formatter(fmt, kwargs))


class InlineBackend(_InlineBackend):
    """%config InlineBackend.figure_formats and print_figure_kwargs, as
    in a kernel, for the figures this runner renders."""

    def _update_figure_formatters(self):
        _use_figure_formats(self.figure_formats, self.print_figure_kwargs)

    _print_figure_kwargs_changed = _update_figure_formatters


def _figures():
    # Every open pyplot figure not shown yet, in number order; then all
    # are closed, so none is shown twice or stays for the next cell.
    try:
        for num in _plt.get_fignums():
            manager = _Gcf.figs.get(num)
            fig = manager.canvas.figure if manager is not None else None
            if fig is not None and not any(f is fig for f in _returned):
                data, _ = _shell.display_formatter.format(fig)
                _out.emit(_out.DISPLAY_DATA, *_out.prepare(data, _complain))
    finally:
        _returned.clear()
        _plt.close('all')


def show(*args, **kwargs):
    """Shows the open figures under the cell now, then closes them."""
    _figures()


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
    # loaded it: the builtins a notebook has (display() is IPython's),
    # pyplot's show(), the figure formatters, and the audit hook (which
    # no one can remove again).
    # (A cell's exit() is IPython's, whose ask_exit() raises SystemExit.)
    from IPython.display import display
    builtins.display = display
    builtins.exit, builtins.quit = _Quitter('exit'), _Quitter('quit')
    _plt.show = show
    _shell.traceback_text = _traceback
    # As the inline backend: pyplot is interactive, so plt.ioff() can
    # say that the figures wait for plt.show() (Agg draws nothing eagerly).
    # pyplot, imported under IPython, would draw every stale figure after
    # each cell (its post_execute hook), besides the rendering below.
    _plt.ion()
    _plt.uninstall_repl_displayhook()
    backend = InlineBackend.instance(parent=_shell)
    _shell.configurables.append(backend)
    backend._update_figure_formatters()
    __import__('_codeinterp_stdin').install()
    _refusals.install()


def _report(value, exc, limit):
    # The RESULT's fields of the cell's fate, keyed by their tags; each
    # text as UTF-8 of at most limit bytes, or None.
    if exc is None:
        outcome, texts = OK, [value, None, None, None, None]
    else:
        # From the type itself (type(), not __class__, which a cell may
        # make a property), and a name that is a str whatever a
        # metaclass answers.
        kind = type(exc)
        try:
            name = type.__getattribute__(kind, '__qualname__')
            name = name if type(name) is str else kind.__name__
        except BaseException:
            name = 'BaseException'
        if issubclass(kind, MemoryError):
            # numpy's _ArrayMemoryError too: the API promises this name;
            # the traceback still names the class.
            outcome, name = MEMORY, 'MemoryError'
        elif issubclass(kind, KeyboardInterrupt):
            outcome = INTERRUPT
        else:
            outcome = ERROR
        try:
            message = str(exc)
            message = message if type(message) is str else '<exception str() failed>'
        except BaseException:
            message = '<exception str() failed>'
        try:
            tb, full = _tracebacks(exc)
        except BaseException:
            tb = full = None
        # The whole traceback only when folding left something out.
        texts = [None, name, message, tb, full if full != tb else None]
    fields = {_ci.FIELD_OUTCOME: outcome}
    flags = 0
    for tag, what, s in zip((_ci.FIELD_VALUE, _ci.FIELD_ENAME, _ci.FIELD_EVALUE,
                             _ci.FIELD_TRACEBACK, _ci.FIELD_TRACEBACK_FULL),
                            ('the value', 'the error name', 'the error message',
                             'the traceback', 'the whole traceback'), texts):
        if s is not None:
            s, cut = _text(s, limit, what)
            flags |= TRUNCATED if cut else 0
        fields[tag] = s
    fields[_ci.FIELD_FLAGS] = flags
    return fields


def _configure(display_limit, run_limit, dpi, env, quota):
    # What belongs to one session, set once in the process that serves
    # it: a zygote loads this runner before any session exists and its
    # children call this after the fork, in their own workspace.
    global _WS, _SITE
    _out.configure(display_limit, run_limit)
    # The configured dpi is every new figure's, as a notebook's default:
    # a cell may still choose its own (plt.figure(dpi=...)).
    _plt.rcParams['figure.dpi'] = dpi
    # Called twice in a zygote's child (ci_interp_prefault): the first
    # call's directories leave the search path.
    for old in (_WS, _SITE):
        if old is not None and old in sys.path:
            sys.path.remove(old)
    _WS = os.getcwd()
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
    home = os.environ.get('HOME', '')
    tmp = os.environ.get('TMPDIR') or os.path.join(os.path.dirname(_WS), 'tmp')
    _refusals.configure(_WS, tmp, home, os.getpid(), quota)
    _shell.use_home(home, _WS)
    # Modules a cell writes into the workspace import as in a notebook,
    # but never shadow the standard library or the installed packages.
    sys.path.append(_WS)
    # Then the session's site directory, beside the workspace, where the
    # host installs what %pip asks for (pip.py): what a worker before a
    # restart installed imports at once.
    site = os.path.join(os.path.dirname(_WS), 'site')
    _SITE = site if os.path.isdir(site) else None
    if _SITE is not None and _SITE not in sys.path:
        sys.path.append(_SITE)


def _rehearse(env):
    # A zygote's spare, before it has a session (ci_interp_prefault):
    # a first cell's path and the session's setup taken once, so that the
    # pages they write are this process's own before its session's turn.
    # The cell runs as cell 1 in a namespace thrown away, and what it
    # adds to the shell's history is taken back.
    global _ns
    cell = (b'import pandas as pd\npd.DataFrame({\'a\': [1, 2]}).a.sum()'
            if 'pandas' in sys.modules else b'x = [1, 2]\nlen(x)')
    history, hook, hidden = _shell.history_manager, _shell.displayhook, _shell.user_ns_hidden
    kept = (dict(history._trait_values), dict(_shell._trait_values),
            (hook._, hook.__, hook.___), set(hidden), len(history.input_hist_parsed))
    main, _ns = _ns, {'__builtins__': builtins}
    try:
        run(1, cell, 1 << 16)
    finally:
        _ns = main
        linecache.cache.pop('<cell 1>', None)
        history._trait_values.clear()
        history._trait_values.update(kept[0])
        _shell._trait_values.clear()
        _shell._trait_values.update(kept[1])
        hook._, hook.__, hook.___ = kept[2]
        for name in set(hidden) - kept[3]:
            del hidden[name]
        del history.input_hist_parsed[kept[4]:]
        del history.input_hist_raw[kept[4]:]
    # Any limits and dpi: the session's call replaces them all.
    _configure(1 << 20, 1 << 22, 100, env, False)


def _first_frame_and_figure():
    # What a first cell would otherwise build lazily: pandas' first
    # frame, group-by, merge and HTML table, and a first figure rendered
    # to PNG (fonts, the Agg renderer, the tight bounding box), through
    # the formatters a cell's value takes. The figure is not pyplot's, so
    # a session's first figure is still number 1.
    pd = sys.modules.get('pandas')
    if pd is not None:
        df = pd.DataFrame({'k': ['a', 'b', 'a'], 'v': [1.0, 2.0, 3.0]})
        df.groupby('k').v.sum()
        _shell.display_formatter.format(df.merge(df, on='k').describe())
    fig = _Figure()
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label='x')
    ax.set_title('x')
    ax.legend()
    _shell.display_formatter.format(fig)
    _shell.display_formatter.format([1.5, 'x', {'k': (1, None)}])
    _shell.transform_cell('%matplotlib inline\n')
    # How the common values are formatted, decided once for all sessions.
    np = sys.modules.get('numpy')
    for value in (1, 1.5, 'x', True, b'x', [1], (1,), {1: 1}, {1}, range(1)) + (
            (np.int64(1), np.float64(1.5), np.bool_(True), np.arange(1)) if np else ()):
        _text_only(value)


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


def _trigger(event, *args):
    # IPython's events (get_ipython().events), for the callbacks that
    # extensions and libraries register; nothing to do, and no cost, when
    # none is registered. A callback that raises is shown, as IPython
    # shows it, and the cell goes on.
    if _shell.events.callbacks[event]:
        _shell.events.trigger(event, *args)


def _run_with_events(count, data):
    # The cell between IPython's pre_ and post_ events, as run_cell
    # fires them; returns (value text, exception).
    info = None
    if _shell.events.callbacks['pre_run_cell'] or _shell.events.callbacks['post_run_cell']:
        from IPython.core.interactiveshell import ExecutionInfo
        info = ExecutionInfo(data.decode('utf-8', 'replace'), count > 0, False, True, None)
    _trigger('pre_execute')
    _trigger('pre_run_cell', info)
    _shell.shown = None
    _shell.keep_result(None)
    try:
        value, exc = _execute(count, f'<cell {count}>', data), None
    except BaseException as e:
        value, exc = None, _refusals.explain(e)
    if exc is None and _shell.shown is not None:
        # An error a magic caught and showed is the cell's, as the error
        # message ipykernel sends for it: the traceback is not printed
        # twice, and the value (if any) stands.
        exc = _refusals.explain(_shell.shown)
    _shell.shown = None
    _trigger('post_execute')
    if info is not None:
        from IPython.core.interactiveshell import ExecutionResult
        result = ExecutionResult(info)
        result.execution_count = count
        result.error_in_exec = exc if issubclass(type(exc), Exception) else None
        _trigger('post_run_cell', result)
    return value, exc


def run(count, data, limit):
    # Runs cell number count, its UTF-8 source data, and returns the
    # fields of its RESULT as a dict keyed by their tags (_report's,
    # FIELD_OUTPUTS, the OUTPUTS payload as bytes, FIELD_OMITTED and
    # FIELD_REFUSALS, the refusals noted since the last cell's).
    # Raises only if interrupted or out of memory while reporting.
    try:
        value, exc = _run_with_events(count, data)
    except BaseException as e:
        # An event callback, or an exception whose methods raise while it
        # is explained: the cell's fate all the same, and its outputs are
        # still taken below, not left to the next cell.
        value, exc = None, e
    # The figures left open, whatever became of the cell (unless it
    # turned pyplot's interactive mode off: then they wait for show());
    # an interrupt while drawing them is the cell's fate if it had none.
    if _Gcf.figs and _plt.isinteractive():
        try:
            _figures()
        except BaseException as e:
            if exc is None:
                value, exc = None, e
    else:
        _returned.clear()
    try:
        _flush()
        outputs, omitted = _out.take()
        fields = _report(value, exc, limit)
        fields[_ci.FIELD_OUTPUTS] = outputs
        fields[_ci.FIELD_OMITTED] = omitted
        fields[_ci.FIELD_REFUSALS] = _refusals.take()
        return fields
    finally:
        # The exception's frames may hold the cell's big locals: drop
        # them now, and collect cycles after a MemoryError.
        low = issubclass(type(exc), MemoryError)
        del value, exc
        if low:
            gc.collect()
