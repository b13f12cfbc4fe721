/*
 * CPython inside the worker: an isolated start-up, the warm imports, and
 * the cell runner, which gives a cell notebook semantics and turns its
 * fate into the fields of a RESULT.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "manifest.h"
#include "proto.h"
#include "worker.h"

/* Debian's python3 lives under /usr. Naming its home skips the search
 * next to the executable, so a stray pyvenv.cfg or lib/python3.11 near
 * build/ cannot redirect the standard library. */
#ifndef CI_PYTHON_HOME
#define CI_PYTHON_HOME L"/usr"
#endif

/*
 * The runner, compiled once as "<codeinterp>"; its frames are cut from
 * every traceback by that name. run(count, source, limit) returns
 * (outcome, flags, value, ename, evalue, traceback, outputs, omitted),
 * the texts as UTF-8 bytes or None, outputs the OUTPUTS field's payload
 * as bytes (b'' for none) and omitted an int, and never raises unless
 * interrupted or out of memory while reporting. It also installs the
 * display() builtin and replaces matplotlib.pyplot.show; load_runner()
 * gives it the display limits and dpi as globals.
 */
static const char runner_src[] =
    "import ast, base64, builtins, gc, io, json, linecache, os, re, struct, sys\n"
    "import threading, tokenize, traceback\n"
    "import matplotlib.pyplot as _plt\n"
    "from matplotlib._pylab_helpers import Gcf as _Gcf\n"
    "from matplotlib.figure import Figure as _Figure\n"
    "\n"
    "OK, ERROR, MEMORY, INTERRUPT = 0, 1, 2, 3\n"
    "TRUNCATED = 1\n"
    "_SELF = (lambda: 0).__code__.co_filename\n"
    "_ns = sys.modules['__main__'].__dict__\n"
    "_QUIET = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,\n"
    "                    tokenize.INDENT, tokenize.DEDENT,\n"
    "                    tokenize.ENDMARKER})\n"
    "\n"
    "\n"
    "def _lines(source):\n"
    "    # Split where the parser counts lines, so linenos index the list.\n"
    "    return io.StringIO(source, newline=None).readlines()\n"
    "\n"
    "def _silenced(lines, last):\n"
    "    # True if the last real token after the last statement is ';'.\n"
    "    # Only that tail is tokenized: a long cell costs nothing more.\n"
    "    final = None\n"
    "    try:\n"
    "        rest = lines[last.end_lineno - 1].encode()[last.end_col_offset:]\n"
    "        tail = iter([rest.decode()] + lines[last.end_lineno:])\n"
    "        for tok in tokenize.generate_tokens(tail.__next__):\n"
    "            if tok.type not in _QUIET:\n"
    "                final = tok.string\n"
    "    except (tokenize.TokenError, SyntaxError, ValueError, IndexError):\n"
    "        return False\n"
    "    return final == ';'\n"
    "\n"
    "def _execute(filename, data):\n"
    "    source = data.decode('utf-8')\n"
    "    lines = _lines(source)\n"
    "    linecache.cache[filename] = (len(source), None, lines, filename)\n"
    "    try:\n"
    "        # compile(), not ast.parse(): a SyntaxError gets no ast.py frame\n"
    "        tree = compile(source, filename, 'exec', ast.PyCF_ONLY_AST, True)\n"
    "        last = None\n"
    "        if (tree.body and isinstance(tree.body[-1], ast.Expr)\n"
    "                and not _silenced(lines, tree.body[-1])):\n"
    "            last = compile(ast.Expression(tree.body.pop().value), filename,\n"
    "                           'eval', dont_inherit=True)\n"
    "        body = compile(tree, filename, 'exec', dont_inherit=True)\n"
    "    except SyntaxError as e:\n"
    "        # The compiler (not the parser) leaves out the line's text\n"
    "        # ('await' outside a function): the traceback shows it from here.\n"
    "        if (e.text is None and e.filename == filename\n"
    "                and isinstance(e.lineno, int) and 0 < e.lineno <= len(lines)):\n"
    "            e.text = lines[e.lineno - 1]\n"
    "        raise\n"
    "    exec(body, _ns)\n"
    "    if last is None:\n"
    "        return None\n"
    "    result = eval(last, _ns)\n"
    "    if result is None:\n"
    "        return None\n"
    "    _ns['_'] = result\n"
    "    if type(result) in _PLAIN:\n"
    "        return repr(result)\n"
    "    # Its text/plain is the VALUE (the object's own, as IPython shows\n"
    "    # it, else repr); the others, if any, are the execute_result.\n"
    "    data = _bundle(result, False, None, None)\n"
    "    text = data.pop('text/plain', None)\n"
    "    if not isinstance(text, str):\n"
    "        text = repr(result)\n"
    "    _emit(EXECUTE_RESULT, *_prepare(data))\n"
    "    return text\n"
    "\n"
    "def _flush():\n"
    "    for name in ('stdout', 'stderr', '__stdout__', '__stderr__'):\n"
    "        try:\n"
    "            getattr(sys, name).flush()\n"
    "        except BaseException:\n"
    "            pass\n"
    "\n"
    "def _text(s, limit):\n"
    "    # UTF-8 whatever s holds, NULs spelled out, cut on a character\n"
    "    # boundary at limit bytes. Returns (bytes, cut).\n"
    "    b = s[:limit].encode('utf-8', 'backslashreplace')\n"
    "    b = b.replace(b'\\0', b'\\\\x00')\n"
    "    if len(s) <= limit and len(b) <= limit:\n"
    "        return b, False\n"
    "    return b[:limit].decode('utf-8', 'ignore').encode(), True\n"
    "\n"
    "def _traceback(exc):\n"
    "    # The runner's frames go, at the start (run, _execute) and wherever\n"
    "    # else they stand (the audit hook raises from inside a cell's call).\n"
    "    tb = exc.__traceback__\n"
    "    while tb is not None and tb.tb_frame.f_code.co_filename == _SELF:\n"
    "        tb = tb.tb_next\n"
    "    node = tb\n"
    "    while node is not None and node.tb_next is not None:\n"
    "        if node.tb_next.tb_frame.f_code.co_filename == _SELF:\n"
    "            node.tb_next = node.tb_next.tb_next\n"
    "        else:\n"
    "            node = node.tb_next\n"
    "    return ''.join(traceback.format_exception(type(exc), exc, tb))\n"
    "\n"
    "# Rich outputs, as IPython's display protocol makes them. C sets\n"
    "# _MAX_OUTPUTS and _MIME_MAX; _configure() the limits and the dpi.\n"
    "DISPLAY_DATA, EXECUTE_RESULT = 1, 2\n"
    "_RICH = (('_repr_png_', 'image/png'), ('_repr_jpeg_', 'image/jpeg'),\n"
    "         ('_repr_svg_', 'image/svg+xml'), ('_repr_html_', 'text/html'),\n"
    "         ('_repr_markdown_', 'text/markdown'), ('_repr_latex_', 'text/latex'),\n"
    "         ('_repr_json_', 'application/json'))\n"
    "_FIRST = tuple(mime for _, mime in _RICH)\n"
    "_RANKED = frozenset(_FIRST + ('text/plain',))\n"
    "# Types with no rich form: a value of one is not even looked at.\n"
    "_PLAIN = frozenset({int, float, complex, bool, str, bytes, bytearray, list,\n"
    "                    tuple, dict, set, frozenset, range, type(None)})\n"
    "_MIME = re.compile(r'[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+').fullmatch\n"
    "_HEAD = struct.Struct('=IIII').pack\n"
    "_BIG = object()\n"
    "# The run's outputs: (data bytes, outputs, messages, omitted, chain), the\n"
    "# chain a linked list of (previous, header, mime, data). Replaced whole\n"
    "# by one store, so an interrupt at any point leaves it consistent; the\n"
    "# lock keeps two threads from replacing each other's.\n"
    "_EMPTY = (0, 0, 0, 0, None)\n"
    "_NONE = (b'', 0)\n"
    "_now = [_EMPTY]\n"
    "_lock = threading.RLock()\n"
    "_returned = []  # pyplot figures shown by display() or as the value\n"
    "\n"
    "def _complain():\n"
    "    # As IPython: a representation that raised is left out, its\n"
    "    # traceback printed.\n"
    "    try:\n"
    "        sys.stderr.write(_traceback(sys.exc_info()[1]))\n"
    "    except Exception:\n"
    "        pass\n"
    "\n"
    "def _png(fig):\n"
    "    # As IPython's print_figure: nothing for an empty figure; else at\n"
    "    # the figure's dpi (rcParams['figure.dpi'] is the configured one),\n"
    "    # cropped to what is drawn (bbox_inches='tight'), in its colours.\n"
    "    if not fig.axes and not fig.lines:\n"
    "        return None\n"
    "    buf = io.BytesIO()\n"
    "    fig.savefig(buf, format='png', dpi=fig.dpi, bbox_inches='tight',\n"
    "                facecolor=fig.get_facecolor(), edgecolor=fig.get_edgecolor())\n"
    "    return buf.getvalue()\n"
    "\n"
    "def _bundle(obj, plain, include, exclude):\n"
    "    # {mime: value} of obj. Methods are looked up on the type, so an\n"
    "    # object answering every attribute (a proxy, a mock) offers none.\n"
    "    data = {}\n"
    "    cls = type(obj)\n"
    "    if isinstance(obj, _Figure):\n"
    "        try:\n"
    "            png = _png(obj)\n"
    "            if png is not None:\n"
    "                data['image/png'] = png\n"
    "        except Exception:\n"
    "            _complain()\n"
    "        if any(m.canvas.figure is obj for m in tuple(_Gcf.figs.values())):\n"
    "            _returned.append(obj)\n"
    "    elif cls not in _PLAIN:\n"
    "        if callable(getattr(cls, '_repr_mimebundle_', None)):\n"
    "            try:\n"
    "                r = obj._repr_mimebundle_(include=include, exclude=exclude)\n"
    "                if isinstance(r, tuple) and len(r) == 2:\n"
    "                    r = r[0]  # (data, metadata)\n"
    "                if isinstance(r, dict):\n"
    "                    for k, v in dict.items(r):\n"
    "                        if type(k) is str and v is not None:\n"
    "                            data[k] = v\n"
    "            except Exception:\n"
    "                _complain()\n"
    "        for name, mime in _RICH:\n"
    "            if mime in data or not callable(getattr(cls, name, None)):\n"
    "                continue\n"
    "            try:\n"
    "                v = getattr(obj, name)()\n"
    "            except Exception:\n"
    "                _complain()\n"
    "                continue\n"
    "            if isinstance(v, tuple) and len(v) == 2:\n"
    "                v = v[0]  # (data, metadata)\n"
    "            if v is not None:\n"
    "                data[mime] = v\n"
    "    if plain and 'text/plain' not in data:\n"
    "        try:\n"
    "            data['text/plain'] = repr(obj)\n"
    "        except Exception:\n"
    "            _complain()\n"
    "    return data\n"
    "\n"
    "def _is_text(mime):\n"
    "    # ci_mime_is_text() in proto.h\n"
    "    return (mime.startswith('text/') or mime == 'application/json'\n"
    "            or mime.endswith(('+json', '+xml')))\n"
    "\n"
    "def _encode(mime, v):\n"
    "    # The bytes of one representation, None to skip it, _BIG if it is\n"
    "    # over the per-output limit before it is even encoded.\n"
    "    if _is_text(mime):\n"
    "        if isinstance(v, (dict, list)) and mime.endswith('json'):\n"
    "            v = json.dumps(v)\n"
    "        elif isinstance(v, (bytes, bytearray)):\n"
    "            if len(v) > _DISPLAY_LIMIT:\n"
    "                return _BIG\n"
    "            v = bytes(v).decode('utf-8', 'replace')\n"
    "        if not isinstance(v, str):\n"
    "            return None\n"
    "        if len(v) > _DISPLAY_LIMIT:\n"
    "            return _BIG\n"
    "        # As _text: UTF-8 whatever v holds, NULs spelled out.\n"
    "        b = str.encode(v, 'utf-8', 'backslashreplace')\n"
    "        return b.replace(b'\\0', b'\\\\x00')\n"
    "    if isinstance(v, str):\n"
    "        # Jupyter's JSON convention: binary data travels as base64.\n"
    "        try:\n"
    "            return base64.b64decode(v)\n"
    "        except ValueError:\n"
    "            return None\n"
    "    if isinstance(v, (bytes, bytearray, memoryview)):\n"
    "        return bytes(v)\n"
    "    return None\n"
    "\n"
    "def _prepare(data, include=None, exclude=None):\n"
    "    # The representations to send, richest first, text/plain last, as\n"
    "    # [(mime, data)] of bytes; and how many are over the per-output limit.\n"
    "    # MIME types are case-insensitive (RFC 2045): sent in lower case.\n"
    "    data = {k.lower(): v for k, v in data.items() if isinstance(k, str)}\n"
    "    if include is not None:\n"
    "        data = {k: v for k, v in data.items() if k in include}\n"
    "    if exclude is not None:\n"
    "        data = {k: v for k, v in data.items() if k not in exclude}\n"
    "    order = [k for k in _FIRST if k in data]\n"
    "    order += [k for k in data if k not in _RANKED]\n"
    "    if 'text/plain' in data:\n"
    "        order.append('text/plain')\n"
    "    items, big = [], 0\n"
    "    for mime in order:\n"
    "        if len(mime) > _MIME_MAX or not _MIME(mime):\n"
    "            continue\n"
    "        try:\n"
    "            b = _encode(mime, data[mime])\n"
    "        except Exception:\n"
    "            _complain()\n"
    "            continue\n"
    "        if b is None:\n"
    "            continue\n"
    "        if b is _BIG or len(b) > _DISPLAY_LIMIT:\n"
    "            big += 1\n"
    "        else:\n"
    "            items.append((mime.encode('ascii'), b))\n"
    "    return items, big\n"
    "\n"
    "def _render(obj, plain, include=None, exclude=None):\n"
    "    return _prepare(_bundle(obj, plain, include, exclude), include, exclude)\n"
    "\n"
    "def _emit(kind, items, big):\n"
    "    # One message: its outputs that fit the run's caps; the rest counted.\n"
    "    if not items and not big:\n"
    "        return\n"
    "    with _lock:\n"
    "        size, count, messages, omitted, chain = _now[0]\n"
    "        omitted += big\n"
    "        kept = 0\n"
    "        for mime, data in items:\n"
    "            n = len(data)\n"
    "            if size + n > _RUN_LIMIT or count >= _MAX_OUTPUTS:\n"
    "                omitted += 1\n"
    "                continue\n"
    "            chain = (chain, _HEAD(kind, messages, len(mime), n), mime, data)\n"
    "            size, count, kept = size + n, count + 1, 1\n"
    "        # Only a message with an output kept takes a number.\n"
    "        _now[0] = (size, count, messages + kept, omitted, chain)\n"
    "\n"
    "def _take():\n"
    "    # The run's OUTPUTS field and omitted count; the next run starts\n"
    "    # afresh (but for what other threads display meanwhile).\n"
    "    if _now[0] is _EMPTY:\n"
    "        return _NONE\n"
    "    with _lock:\n"
    "        state = _now[0]\n"
    "        _now[0] = _EMPTY\n"
    "    parts = []\n"
    "    node = state[4]\n"
    "    while node is not None:\n"
    "        node, head, mime, data = node\n"
    "        parts += (data, mime, head)\n"
    "    parts.reverse()\n"
    "    return b''.join(parts), min(state[3], 0xFFFFFFFF)\n"
    "\n"
    "def display(*objs, include=None, exclude=None, raw=False, **kwargs):\n"
    "    \"\"\"Show each object under the cell, as IPython's display() does.\n"
    "\n"
    "    Rich representations (_repr_html_, _repr_png_, matplotlib figures...)\n"
    "    come with text/plain; include and exclude name the MIME types to keep\n"
    "    or drop; with raw=True each object is a {mime: data} dict already.\n"
    "    \"\"\"\n"
    "    for obj in objs:\n"
    "        if raw:\n"
    "            if isinstance(obj, dict):\n"
    "                data = {k: v for k, v in dict.items(obj) if type(k) is str}\n"
    "                _emit(DISPLAY_DATA, *_prepare(data, include, exclude))\n"
    "        else:\n"
    "            _emit(DISPLAY_DATA, *_render(obj, True, include, exclude))\n"
    "\n"
    "def _figures():\n"
    "    # Every open pyplot figure not shown yet, in number order; then all\n"
    "    # are closed, so none is shown twice or stays for the next cell.\n"
    "    try:\n"
    "        for num in _plt.get_fignums():\n"
    "            manager = _Gcf.figs.get(num)\n"
    "            fig = manager.canvas.figure if manager is not None else None\n"
    "            if fig is not None and not any(f is fig for f in _returned):\n"
    "                _emit(DISPLAY_DATA, *_render(fig, True))\n"
    "    finally:\n"
    "        _returned.clear()\n"
    "        _plt.close('all')\n"
    "\n"
    "def show(*args, **kwargs):\n"
    "    \"\"\"Shows the open figures under the cell now, then closes them.\"\"\"\n"
    "    _figures()\n"
    "\n"
    "builtins.display = display\n"
    "_plt.show = show\n"
    "\n"
    "def _report(value, exc, limit):\n"
    "    if exc is None:\n"
    "        outcome, texts = OK, [value, None, None, None]\n"
    "    else:\n"
    "        name = type(exc).__qualname__\n"
    "        if isinstance(exc, MemoryError):\n"
    "            # numpy's _ArrayMemoryError too: the API promises this name;\n"
    "            # the traceback still names the class.\n"
    "            outcome, name = MEMORY, 'MemoryError'\n"
    "        elif isinstance(exc, KeyboardInterrupt):\n"
    "            outcome = INTERRUPT\n"
    "        else:\n"
    "            outcome = ERROR\n"
    "        try:\n"
    "            message = str(exc)\n"
    "        except BaseException:\n"
    "            message = '<exception str() failed>'\n"
    "        try:\n"
    "            tb = _traceback(exc)\n"
    "        except BaseException:\n"
    "            tb = None\n"
    "        texts = [None, name, message, tb]\n"
    "    flags = 0\n"
    "    for i, s in enumerate(texts):\n"
    "        if s is not None:\n"
    "            texts[i], cut = _text(s, limit)\n"
    "            flags |= TRUNCATED if cut else 0\n"
    "    return (outcome, flags, *texts)\n"
    "\n"
    "# Messages a model can act on. The audit hook raises, before the\n"
    "# system call, a PermissionError that names the policy; _explain()\n"
    "# rewrites the kernel's bare refusal of a path outside the session.\n"
    "# Neither is a boundary: the seccomp filter and Landlock refuse the\n"
    "# same things with the hook bypassed.\n"
    "_NET = 'network access is disabled in this sandbox'\n"
    "_PROC = ('creating processes is disabled in this sandbox'\n"
    "         ' (subprocess, os.system, os.fork)')\n"
    "_SIGNAL = 'sending signals to other processes is disabled in this sandbox'\n"
    "_LINK = ('creating symbolic links is disabled in this sandbox;'\n"
    "         ' copy the file instead (shutil.copy)')\n"
    "_PROCESS_EVENTS = frozenset({'subprocess.Popen', 'os.fork', 'os.forkpty',\n"
    "    'os.posix_spawn', 'os.exec', 'os.spawn', 'pty.spawn'})\n"
    "_last_open = [None]\n"
    "\n"
    "def _audit(event, args):\n"
    "    if event == 'open':\n"
    "        _last_open[0] = args\n"
    "    elif event in _PROCESS_EVENTS:\n"
    "        raise PermissionError(_PROC)\n"
    "    elif event in ('socket.getaddrinfo', 'socket.gethostbyname',\n"
    "                   'socket.gethostbyaddr'):\n"
    "        # A name lookup would only fail, and say less.\n"
    "        raise PermissionError(_NET)\n"
    "    elif event == 'socket.__new__':\n"
    "        # socket.socketpair() and socket.dup() wrap a descriptor they\n"
    "        # already have (asyncio needs them); anything else would be new.\n"
    "        f = sys._getframe(1)\n"
    "        if not (f.f_code.co_name == '__init__'\n"
    "                and f.f_locals.get('fileno') is not None):\n"
    "            raise PermissionError(_NET)\n"
    "    elif event == 'os.kill':\n"
    "        if args[0] != _PID:\n"
    "            raise PermissionError(_SIGNAL)\n"
    "    elif event == 'os.killpg':\n"
    "        raise PermissionError(_SIGNAL)\n"
    "    elif event == 'os.symlink':\n"
    "        raise PermissionError(_LINK)\n"
    "    elif event == 'os.system':\n"
    "        # os.system reports failure as a status: keep that, but say why.\n"
    "        try:\n"
    "            print(f'os.system: {_PROC}', file=sys.stderr)\n"
    "        except Exception:\n"
    "            pass\n"
    "\n"
    "def _under(path, roots):\n"
    "    return any(path == r or path.startswith(r.rstrip('/') + '/') for r in roots)\n"
    "\n"
    "def _explain(exc):\n"
    "    # A refusal of a path outside the session gets a message naming the\n"
    "    # policy; its type and traceback stay.\n"
    "    try:\n"
    "        if type(exc) not in (PermissionError, FileNotFoundError):\n"
    "            return exc\n"
    "        name = exc.filename\n"
    "        if isinstance(name, bytes):\n"
    "            name = os.fsdecode(name)\n"
    "        if not isinstance(name, str) or not name:\n"
    "            return exc\n"
    "        path = os.path.abspath(name)\n"
    "        last = _last_open[0]\n"
    "        if last is not None and last[0] in (exc.filename, name):\n"
    "            mode, flags = last[1] or '', last[2] or 0\n"
    "            write = (any(c in mode for c in 'wax+') or flags &\n"
    "                     (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC))\n"
    "        else:\n"
    "            write = _under(path, _READABLE)\n"
    "        if (not write and type(exc) is PermissionError and _manifest_listed\n"
    "                and _under(path, _MANIFEST_DIRS)\n"
    "                and not _manifest_listed(os.path.realpath(path))):\n"
    "            msg = (f'the signed package manifest does not list {path};'\n"
    "                   ' this session reads only the packages it lists')\n"
    "        elif write and not _under(path, _WRITABLE):\n"
    "            msg = _WRITE\n"
    "        elif not write and not _under(path, _READABLE):\n"
    "            msg = (f'this sandbox can only read the session directories and'\n"
    "                   f' the Python installation; {path} is outside them')\n"
    "        else:\n"
    "            return exc\n"
    "        new = type(exc)(msg)\n"
    "        new.errno = exc.errno\n"
    "        return new.with_traceback(exc.__traceback__)\n"
    "    except Exception:\n"
    "        return exc\n"
    "\n"
    "sys.addaudithook(_audit)\n"
    "\n"
    "class _Quitter:\n"
    "    # exit() and quit() as site's, without closing sys.stdin (fd 0),\n"
    "    # which would break help() and input() for the rest of the session.\n"
    "    def __init__(self, name):\n"
    "        self.name = name\n"
    "    def __repr__(self):\n"
    "        return f'Use {self.name}() to raise SystemExit'\n"
    "    def __call__(self, code=None):\n"
    "        raise SystemExit(code)\n"
    "builtins.exit, builtins.quit = _Quitter('exit'), _Quitter('quit')\n"
    "\n"
    "def _configure(display_limit, run_limit, dpi, env):\n"
    "    # What belongs to one session, set once in the process that serves\n"
    "    # it: a zygote loads this runner before any session exists and its\n"
    "    # children call this after the fork, in their own workspace.\n"
    "    global _DISPLAY_LIMIT, _RUN_LIMIT, _WS, _TMP, _WRITABLE, _READABLE\n"
    "    global _WRITE, _PID\n"
    "    _DISPLAY_LIMIT, _RUN_LIMIT = display_limit, run_limit\n"
    "    # The configured dpi is every new figure's, as a notebook's default:\n"
    "    # a cell may still choose its own (plt.figure(dpi=...)).\n"
    "    _plt.rcParams['figure.dpi'] = dpi\n"
    "    # Called twice in a zygote's child (ci_interp_prefault): the first\n"
    "    # call's directory leaves the search path.\n"
    "    if globals().get('_WS') in sys.path:\n"
    "        sys.path.remove(_WS)\n"
    "    _WS = os.getcwd()\n"
    "    _PID = os.getpid()\n"
    "    # A zygote's child gets its session's HOME, MPLCONFIGDIR and TMPDIR\n"
    "    # here (os.environ sets the C environment too).\n"
    "    for k, v in env.items():\n"
    "        os.environ[k] = v\n"
    "    import tempfile\n"
    "    tempfile.tempdir = None\n"
    "    # matplotlib memoises its directories at the first call, which a\n"
    "    # zygote made for its own (removed) one.\n"
    "    import matplotlib\n"
    "    _cfg = os.environ.get('MPLCONFIGDIR')\n"
    "    if _cfg:\n"
    "        matplotlib.get_configdir = matplotlib.get_cachedir = lambda: _cfg\n"
    "    # A fork copies every generator's state: each session draws its own\n"
    "    # numbers. (random reseeds itself after a fork; numpy does not.) The\n"
    "    # global MT19937's whole state from the kernel: as random as seed()\n"
    "    # with no argument, without its SeedSequence (a third of a ms).\n"
    "    np = sys.modules.get('numpy.random')\n"
    "    if np is not None:\n"
    "        key = sys.modules['numpy'].frombuffer(os.urandom(2496), dtype='uint32')\n"
    "        np.set_state(('MT19937', key, 624))\n"
    "    _TMP = os.environ.get('TMPDIR') or os.path.join(os.path.dirname(_WS), 'tmp')\n"
    "    _WRITABLE = tuple(os.path.join(os.path.dirname(_WS), d) for d in\n"
    "                      ('workspace', 'config', 'tmp')) + (_TMP,)\n"
    "    _READABLE = _WRITABLE + ('/usr', '/lib', '/lib64', '/etc/ld.so.cache',\n"
    "        '/etc/localtime', '/etc/matplotlibrc', '/etc/mime.types',\n"
    "        '/sys/devices/system/cpu', '/proc/self', f'/proc/{_PID}',\n"
    "        '/dev/null', '/dev/zero', '/dev/random', '/dev/urandom')\n"
    "    _WRITE = ('this sandbox can only write inside the session workspace'\n"
    "              f' ({_WS}), TMPDIR ({_TMP}) and HOME ({os.environ.get(\"HOME\", \"\")})')\n"
    "    # Modules a cell writes into the workspace import as in a notebook,\n"
    "    # but never shadow the standard library or the installed packages.\n"
    "    sys.path.append(_WS)\n"
    "\n"
    "def _rehearse(env):\n"
    "    # A zygote's spare, before it has a session (ci_interp_prefault):\n"
    "    # a first cell's path and the session's setup taken once, the cell\n"
    "    # in a namespace thrown away, so that the pages they write are this\n"
    "    # process's own before its session's turn.\n"
    "    global _ns\n"
    "    cell = (b'import pandas as pd\\npd.DataFrame({\\'a\\': [1, 2]}).a.sum()'\n"
    "            if 'pandas' in sys.modules else b'x = [1, 2]\\nlen(x)')\n"
    "    main, _ns = _ns, {'__builtins__': builtins}\n"
    "    try:\n"
    "        run(0, cell, 1 << 16)\n"
    "    finally:\n"
    "        _ns = main\n"
    "        linecache.cache.pop('<cell 0>', None)\n"
    "    # Any limits and dpi: the session's call replaces them all.\n"
    "    _configure(1 << 20, 1 << 22, 100, env)\n"
    "\n"
    "def run(count, data, limit):\n"
    "    try:\n"
    "        value, exc = _execute(f'<cell {count}>', data), None\n"
    "    except BaseException as e:\n"
    "        value, exc = None, _explain(e)\n"
    "    # The figures left open, whatever became of the cell; an interrupt\n"
    "    # while drawing them is the cell's fate if it had none.\n"
    "    if _Gcf.figs:\n"
    "        try:\n"
    "            _figures()\n"
    "        except BaseException as e:\n"
    "            if exc is None:\n"
    "                value, exc = None, e\n"
    "    elif _returned:\n"
    "        _returned.clear()\n"
    "    try:\n"
    "        _flush()\n"
    "        outputs = _take()\n"
    "        return _report(value, exc, limit) + outputs\n"
    "    finally:\n"
    "        # The exception's frames may hold the cell's big locals: drop\n"
    "        # them now, and collect cycles after a MemoryError.\n"
    "        low = isinstance(exc, MemoryError)\n"
    "        del value, exc\n"
    "        if low:\n"
    "            gc.collect()\n";

static PyObject *run_fn;        /* the runner's run() */
static PyThreadState *main_ts;  /* parked here while no cell runs */

static _Noreturn void python_failed(const char *what)
{
    if (PyErr_Occurred())
        PyErr_Print();
    ci_fatal(CI_EXIT_PYTHON, "%s", what);
}

static void check_status(PyStatus st)
{
    if (PyStatus_Exception(st))
        ci_fatal(CI_EXIT_PYTHON, "%s: %s", st.func ? st.func : "python",
                 st.err_msg ? st.err_msg : "initialisation failed");
}

static void init_python(void)
{
    PyPreConfig pre;
    PyConfig cfg;
    PyStatus st;

    /* The isolated configuration ignores the locale; without UTF-8 mode
     * stdout would be ASCII and print('\u2713') would fail. */
    PyPreConfig_InitIsolatedConfig(&pre);
    pre.utf8_mode = 1;
    check_status(Py_PreInitialize(&pre));

    /* Isolated: no PYTHON* variables, no user site. */
    PyConfig_InitIsolatedConfig(&cfg);
    cfg.install_signal_handlers = 1; /* SIGINT -> KeyboardInterrupt */
    cfg.buffered_stdio = 0;          /* output reaches the host as written */
    st = PyConfig_SetString(&cfg, &cfg.home, CI_PYTHON_HOME);
    /* With a manifest: no site, so no .pth file runs and no
     * sitecustomize; CPython starts on the standard library's own
     * directories only (what it imports while it starts, encodings,
     * comes from there), and install_finder() sets the manifest's search
     * path once its hook is in place. */
    if (ci_manifest())
        cfg.site_import = 0;
    if (!PyStatus_Exception(st))
        st = Py_InitializeFromConfig(&cfg);
    PyConfig_Clear(&cfg);
    check_status(st);
}

/*
 * The import hook of a signed package manifest, first in sys.meta_path:
 * it asks the finders after it, and lets a module through only if its
 * file is listed or lies beneath the session directory (a cell's own
 * modules), a namespace package only if a listed file lies beneath one
 * of its directories; builtin and frozen modules, and modules that no
 * file backs (six.moves), always. Not a boundary (a cell can remove it):
 * Landlock refuses the unlisted files themselves. It gives the refusal
 * a message that names the policy.
 */
static const char finder_src[] =
    "import os, sys\n"
    "from _frozen_importlib import BuiltinImporter, FrozenImporter\n"
    "from _frozen_importlib_external import SourceFileLoader\n"
    "\n"
    "class ManifestLoader(SourceFileLoader):\n"
    "    # Checks the bytes a module is made of against the manifest as it\n"
    "    # reads them, so that a source changed after the zygote's check is\n"
    "    # refused, not run. Unlisted bytecode is ignored (the checked\n"
    "    # source is compiled instead).\n"
    "    def get_data(self, path):\n"
    "        data = super().get_data(path)\n"
    "        if path.endswith(('.py', '.pyc')):\n"
    "            ok = _matches(path, data)\n"
    "            if ok < 0 and path != self.path:\n"
    "                raise OSError(f'{path} is not in the signed package manifest')\n"
    "            if ok <= 0:\n"
    "                raise ImportError(f'{path} changed since the signed package manifest'\n"
    "                                  ' was checked; it is not run', name=self.name,\n"
    "                                  path=path)\n"
    "        return data\n"
    "\n"
    "class ManifestFinder:\n"
    "    # Imports only what the signed package manifest lists.\n"
    "    _session = None\n"
    "\n"
    "    def _local(self, path):\n"
    "        s = self._session\n"
    "        return s is not None and os.path.realpath(path).startswith(s)\n"
    "\n"
    "    def _allowed(self, spec):\n"
    "        if spec.loader in (BuiltinImporter, FrozenImporter):\n"
    "            return True\n"
    "        if (spec.loader is None and spec.origin is None\n"
    "                and spec.submodule_search_locations is not None):\n"
    "            return any(isinstance(d, str) and (_listed_beneath(d) or self._local(d))\n"
    "                       for d in spec.submodule_search_locations)\n"
    "        if spec.has_location and isinstance(spec.origin, str):\n"
    "            return _listed(spec.origin) or self._local(spec.origin)\n"
    "        return True\n"
    "\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        for finder in sys.meta_path:\n"
    "            find = getattr(finder, 'find_spec', None)\n"
    "            if finder is self or find is None:\n"
    "                continue\n"
    "            spec = find(name, path, target)\n"
    "            if spec is not None:\n"
    "                break\n"
    "        else:\n"
    "            return None\n"
    "        if self._allowed(spec):\n"
    "            if (type(spec.loader) is SourceFileLoader\n"
    "                    and not self._local(spec.origin)):\n"
    "                spec.loader = ManifestLoader(spec.loader.name, spec.loader.path)\n"
    "            return spec\n"
    "        raise ModuleNotFoundError(f'No module named {name!r}: the signed package'\n"
    "                                  ' manifest does not list it', name=name)\n"
    "\n"
    "    def invalidate_caches(self):\n"
    "        pass\n"
    "\n"
    "finder = ManifestFinder()\n"
    "sys.meta_path.insert(0, finder)\n"
    "sys.path[:] = _search\n"
    "sys.path_importer_cache.clear()\n"
    "# help(), copyright() and the rest, without running site's main().\n"
    "import site\n"
    "site.sethelper()\n"
    "site.setcopyright()\n";

#define DENIED_TAIL "the signed package manifest does not list it"

static PyObject *manifest_finder; /* NULL without a manifest */

/* The path of str @arg in the filesystem encoding, or NULL. */
static PyObject *fs_path(PyObject *arg)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "a path must be a str");
        return NULL;
    }
    return PyUnicode_EncodeFSDefault(arg);
}

/* @test of the str path @arg, as a bool. */
static PyObject *path_test(PyObject *arg, int (*test)(const char *))
{
    PyObject *b = fs_path(arg);
    int r;

    if (!b)
        return NULL;
    r = test(PyBytes_AS_STRING(b));
    Py_DECREF(b);
    return PyBool_FromLong(r);
}

static PyObject *py_listed(PyObject *self, PyObject *arg)
{
    (void)self;
    return path_test(arg, ci_manifest_listed);
}

static PyObject *py_listed_beneath(PyObject *self, PyObject *arg)
{
    (void)self;
    return path_test(arg, ci_manifest_listed_beneath);
}

/* _matches(path, data): ci_manifest_matches() of a str path and bytes. */
static PyObject *py_matches(PyObject *self, PyObject *args)
{
    PyObject *path, *b;
    Py_buffer data;
    int r;

    (void)self;
    if (!PyArg_ParseTuple(args, "Uy*", &path, &data))
        return NULL;
    b = fs_path(path);
    if (!b) {
        PyBuffer_Release(&data);
        return NULL;
    }
    r = ci_manifest_matches(PyBytes_AS_STRING(b), data.buf, (size_t)data.len);
    Py_DECREF(b);
    PyBuffer_Release(&data);
    return PyLong_FromLong(r);
}

static PyMethodDef listed_def = {"_listed", py_listed, METH_O, NULL};
static PyMethodDef matches_def = {"_matches", py_matches, METH_VARARGS, NULL};
static PyMethodDef listed_beneath_def = {"_listed_beneath", py_listed_beneath, METH_O, NULL};

/* The runner's _manifest_listed and _MANIFEST_DIRS, for the message of a
 * refused read (_explain); None and () without a manifest. */
static void set_manifest_globals(PyObject *globals)
{
    const struct ci_mf_policy *mf = ci_manifest();
    PyObject *f = mf ? PyCFunction_New(&listed_def, NULL) : Py_NewRef(Py_None),
             *dirs = PyTuple_New(mf ? (Py_ssize_t)mf->n_search : 0);

    for (size_t i = 0; f && dirs && mf && i < mf->n_search; i++) {
        PyObject *d = PyUnicode_DecodeFSDefault(mf->search_path[i]);

        if (!d)
            break;
        PyTuple_SET_ITEM(dirs, (Py_ssize_t)i, d);
    }
    if (!f || !dirs || PyErr_Occurred() ||
        PyDict_SetItemString(globals, "_manifest_listed", f) < 0 ||
        PyDict_SetItemString(globals, "_MANIFEST_DIRS", dirs) < 0)
        python_failed("cannot compile the cell runner");
    Py_DECREF(f);
    Py_DECREF(dirs);
}

/* The finder's _search: the manifest's search path, a list of str. */
static int set_search(PyObject *globals)
{
    const struct ci_mf_policy *mf = ci_manifest();
    PyObject *list = PyList_New(0);
    int rc = list ? 0 : -1;

    for (size_t i = 0; rc == 0 && i < mf->n_search; i++) {
        PyObject *d = PyUnicode_DecodeFSDefault(mf->search_path[i]);

        rc = d ? PyList_Append(list, d) : -1;
        Py_XDECREF(d);
    }
    if (rc == 0)
        rc = PyDict_SetItemString(globals, "_search", list);
    Py_XDECREF(list);
    return rc;
}

static void install_finder(void)
{
    PyObject *globals = PyDict_New(), *f1 = PyCFunction_New(&listed_def, NULL),
             *f2 = PyCFunction_New(&listed_beneath_def, NULL),
             *f3 = PyCFunction_New(&matches_def, NULL), *r = NULL, *code;

    /* Compiled as the runner is, so that tracebacks leave its frames out. */
    code = Py_CompileString(finder_src, "<codeinterp>", Py_file_input);
    if (code && globals && f1 && f2 && f3 &&
        PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) == 0 &&
        PyDict_SetItemString(globals, "_listed", f1) == 0 &&
        PyDict_SetItemString(globals, "_listed_beneath", f2) == 0 &&
        PyDict_SetItemString(globals, "_matches", f3) == 0 && set_search(globals) == 0)
        r = PyEval_EvalCode(code, globals, globals);
    if (!r)
        python_failed("manifest: cannot install its import hook");
    Py_DECREF(r);
    Py_DECREF(code);
    manifest_finder = PyDict_GetItemString(globals, "finder");
    Py_XINCREF(manifest_finder);
    Py_DECREF(f1);
    Py_DECREF(f2);
    Py_DECREF(f3);
    Py_DECREF(globals);
}

/* An import the manifest refused: the start fails naming the module. */
static void check_denied(const char *name)
{
    PyObject *type, *value, *tb, *str = NULL;
    const char *text;

    if (!manifest_finder || !PyErr_ExceptionMatches(PyExc_ModuleNotFoundError))
        return;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value)
        str = PyObject_Str(value);
    text = str ? PyUnicode_AsUTF8(str) : NULL;
    if (text && strstr(text, DENIED_TAIL))
        ci_fatal(CI_EXIT_MANIFEST, "manifest: the preloaded module %s cannot be imported: %s",
                 name, text);
    PyErr_Clear();
    Py_XDECREF(str);
    PyErr_Restore(type, value, tb);
}

static PyObject *warm_import(const char *name)
{
    PyObject *m = PyImport_ImportModule(name);

    if (!m) {
        check_denied(name);
        PyErr_Print();
        ci_fatal(CI_EXIT_PYTHON, "warm-up: cannot import %s", name);
    }
    return m;
}

/* Imports each module of @preload (a comma-separated list, checked by
 * the host), then matplotlib on the Agg backend and pyplot, which the
 * runner needs whatever the list says. */
static void warm(const char *preload)
{
    PyObject *mpl, *r;
    char name[256];

    for (const char *p = preload; *p;) {
        size_t n = strcspn(p, ",");

        if (n == 0 || n >= sizeof name)
            ci_fatal(CI_EXIT_USAGE, "--preload: bad module name in '%s'", preload);
        memcpy(name, p, n);
        name[n] = '\0';
        Py_DECREF(warm_import(name));
        p += n + (p[n] == ',');
    }
    mpl = warm_import("matplotlib");
    r = PyObject_CallMethod(mpl, "use", "s", "Agg");
    if (!r)
        python_failed("warm-up: matplotlib.use('Agg') failed");
    Py_DECREF(r);
    Py_DECREF(mpl);
    Py_DECREF(warm_import("matplotlib.pyplot"));
}

/*
 * What a first cell would otherwise build lazily: pandas' first frame,
 * group-by, merge and HTML table, and a first figure rendered to PNG
 * (fonts, the Agg renderer, the tight bounding box). A zygote runs it
 * once for all its children. The figure is not pyplot's, so a session's
 * first figure is still number 1.
 */
static const char prime_src[] =
    "import io, sys\n"
    "pd = sys.modules.get('pandas')\n"
    "if pd is not None:\n"
    "    df = pd.DataFrame({'k': ['a', 'b', 'a'], 'v': [1.0, 2.0, 3.0]})\n"
    "    df.groupby('k').v.sum()\n"
    "    df.merge(df, on='k').describe()\n"
    "    repr(df), df._repr_html_()\n"
    "from matplotlib.figure import Figure\n"
    "fig = Figure()\n"
    "ax = fig.subplots()\n"
    "ax.plot([0, 1], [0, 1], label='x')\n"
    "ax.set_title('x')\n"
    "ax.legend()\n"
    "fig.savefig(io.BytesIO(), format='png', bbox_inches='tight')\n";

/* Runs @src in a namespace of its own (not the cells' __main__); exits
 * saying @what on failure. Needs the GIL. */
static void run_private(const char *src, const char *what)
{
    PyObject *globals = PyDict_New(), *r = NULL;

    if (globals && PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) == 0)
        r = PyRun_String(src, Py_file_input, globals, globals);
    if (!r)
        python_failed(what);
    Py_DECREF(r);
    Py_DECREF(globals);
}

static PyObject *configure_fn; /* the runner's _configure() */
static PyObject *rehearse_fn;  /* the runner's _rehearse() */

static void load_runner(void)
{
    PyObject *code, *globals, *r;

    code = Py_CompileString(runner_src, "<codeinterp>", Py_file_input);
    globals = PyDict_New();
    if (!code || !globals ||
        PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0)
        python_failed("cannot compile the cell runner");
    r = PyLong_FromSize_t(CI_MAX_OUTPUTS);
    if (!r || PyDict_SetItemString(globals, "_MAX_OUTPUTS", r) < 0)
        python_failed("cannot compile the cell runner");
    Py_DECREF(r);
    r = PyLong_FromSize_t(CI_MIME_MAX);
    if (!r || PyDict_SetItemString(globals, "_MIME_MAX", r) < 0)
        python_failed("cannot compile the cell runner");
    Py_DECREF(r);
    set_manifest_globals(globals);
    r = PyEval_EvalCode(code, globals, globals);
    if (!r)
        python_failed("cannot start the cell runner");
    run_fn = PyDict_GetItemString(globals, "run");
    configure_fn = PyDict_GetItemString(globals, "_configure");
    rehearse_fn = PyDict_GetItemString(globals, "_rehearse");
    if (!run_fn || !configure_fn || !rehearse_fn)
        python_failed("the cell runner has no run(), _configure() or _rehearse()");
    Py_INCREF(run_fn);
    Py_INCREF(configure_fn);
    Py_INCREF(rehearse_fn);
    Py_DECREF(r);
    Py_DECREF(code);
    Py_DECREF(globals);
}

void ci_interp_warm(const char *preload, int zygote)
{
    /* Python starts and warms up away from any workspace: this all runs
     * before Landlock and seccomp, so it must read nothing a cell wrote,
     * and matplotlib looks for a matplotlibrc in the working directory
     * first. (Each worker, and the zygote, gets HOME and MPLCONFIGDIR
     * directories of its own for the same reason.) */
    int back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

    if (back < 0 || chdir("/") != 0)
        ci_fatal(CI_EXIT_PYTHON, "cannot leave the working directory for the warm-up: %s",
                 strerror(errno));
    init_python();
    if (ci_manifest())
        install_finder();
    warm(preload);
    load_runner();
    /*
     * A zygote's children share its pages until they write them. The
     * cyclic collector writes to every object it visits, so a full
     * collection in one child would copy nearly all of them: frozen, the
     * objects of the warm-up are never visited again (gc.freeze(), made
     * for this, as the documentation of the gc module says).
     */
    if (zygote)
        run_private(prime_src, "warm-up: the first frame and figure failed");
    if (zygote)
        run_private("import gc\ngc.collect()\ngc.freeze()\n", "warm-up: gc.freeze() failed");
    if (fchdir(back) != 0)
        ci_fatal(CI_EXIT_PYTHON, "cannot return from the warm-up: %s", strerror(errno));
    close(back);
    main_ts = PyEval_SaveThread();
}

void ci_interp_prefault(void)
{
    static const char *const var[] = {"HOME", "MPLCONFIGDIR", "TMPDIR"};
    PyObject *env, *r;

    PyEval_RestoreThread(main_ts);
    /* The session's own environment replaces this one's. */
    env = PyDict_New();
    for (size_t i = 0; env && i < sizeof var / sizeof *var; i++) {
        PyObject *v = getenv(var[i]) ? PyUnicode_DecodeFSDefault(getenv(var[i])) : NULL;

        if (v && PyDict_SetItemString(env, var[i], v) < 0)
            python_failed("spare: the prefault failed");
        Py_XDECREF(v);
    }
    r = env ? PyObject_CallOneArg(rehearse_fn, env) : NULL;
    if (!r)
        python_failed("spare: the prefault failed");
    Py_DECREF(r);
    Py_DECREF(env);
    main_ts = PyEval_SaveThread();
}

pid_t ci_interp_fork(unsigned long flags)
{
    long pid;
    int err;

    PyEval_RestoreThread(main_ts);
    PyOS_BeforeFork();
    pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    err = errno;
    if (pid == 0)
        PyOS_AfterFork_Child(); /* the at-fork hooks: random reseeds itself */
    else
        PyOS_AfterFork_Parent();
    main_ts = PyEval_SaveThread();
    return pid < 0 ? -err : (pid_t)pid;
}

void ci_interp_configure(const struct ci_limits *limits, const char *session_dir)
{
    PyObject *env, *r;

    PyEval_RestoreThread(main_ts);
    env = PyDict_New();
    if (!env)
        python_failed("cannot configure the cell runner");
    if (session_dir) {
        static const char *const var[][2] = {
            {"HOME", "config"}, {"MPLCONFIGDIR", "config"}, {"TMPDIR", "tmp"}};

        for (size_t i = 0; i < sizeof var / sizeof *var; i++) {
            PyObject *v = PyUnicode_FromFormat("%s/%s", session_dir, var[i][1]);

            if (!v || PyDict_SetItemString(env, var[i][0], v) < 0)
                python_failed("cannot configure the cell runner");
            Py_DECREF(v);
        }
    }
    r = PyObject_CallFunction(configure_fn, "nnIO", (Py_ssize_t)limits->display_limit,
                              (Py_ssize_t)limits->display_run_limit, limits->dpi, env);
    if (!r)
        python_failed("cannot configure the cell runner");
    Py_DECREF(r);
    /* The cell's own modules: anything beneath the session directory,
     * the parent of the workspace (the cwd), as a path ending in '/'. */
    if (manifest_finder) {
        char cwd[PATH_MAX], *slash;
        PyObject *dir;

        if (!getcwd(cwd, sizeof cwd - 1) || !(slash = strrchr(cwd, '/')) || slash == cwd)
            ci_fatal(CI_EXIT_PYTHON, "cannot configure the import hook: no session directory");
        slash[1] = '\0';
        dir = PyUnicode_DecodeFSDefault(cwd);
        if (!dir || PyObject_SetAttrString(manifest_finder, "_session", dir) < 0)
            python_failed("cannot configure the import hook");
        Py_DECREF(dir);
    }
    Py_DECREF(env);
    main_ts = PyEval_SaveThread();
}

void ci_interp_start(const struct ci_limits *limits)
{
    ci_interp_warm(limits->preload, 0);
    ci_interp_configure(limits, NULL);
}

/* Reads item @i of @res as a u32; 0 if it is not an int in range. */
static int item_u32(PyObject *res, Py_ssize_t i, uint32_t *v)
{
    unsigned long n = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(res, i));

    if (PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (n > UINT32_MAX)
        return 0;
    *v = (uint32_t)n;
    return 1;
}

/* Takes the runner's tuple apart. Returns 0 if it is not what run()
 * returns (a cell can reach the runner's globals and replace them).
 * Only the sizes that keep the frame within its u32 length are checked
 * here; the host checks the outputs' content as it checks everything. */
static int unpack(PyObject *res, const struct ci_limits *limits, struct ci_cell *out)
{
    struct ci_text *texts[4] = {&out->value, &out->ename, &out->evalue,
                                &out->traceback};
    PyObject *o;

    if (!PyTuple_CheckExact(res) || PyTuple_GET_SIZE(res) != 8)
        return 0;
    if (!item_u32(res, 0, &out->outcome) || !item_u32(res, 1, &out->flags) ||
        !item_u32(res, 7, &out->omitted))
        return 0;
    if (out->outcome > CI_OUTCOME_INTERRUPT || out->flags > CI_FLAG_TRUNCATED)
        return 0;
    for (int i = 0; i < 4; i++) {
        PyObject *t = PyTuple_GET_ITEM(res, i + 2);

        if (t == Py_None)
            continue;
        if (!PyBytes_CheckExact(t) ||
            (size_t)PyBytes_GET_SIZE(t) > limits->output_limit)
            return 0;
        texts[i]->data = PyBytes_AS_STRING(t);
        texts[i]->len = (size_t)PyBytes_GET_SIZE(t);
    }
    o = PyTuple_GET_ITEM(res, 6);
    if (!PyBytes_CheckExact(o) ||
        (uint64_t)PyBytes_GET_SIZE(o) > CI_OUTPUTS_MAX(limits->display_run_limit))
        return 0;
    if (PyBytes_GET_SIZE(o) > 0) { /* an empty field is not sent */
        out->outputs.data = PyBytes_AS_STRING(o);
        out->outputs.len = (size_t)PyBytes_GET_SIZE(o);
    }
    out->owner = res;
    return 1;
}

/* The runner itself failed (interrupted or out of memory while
 * reporting, or tampered with): say what we can without allocating. */
static void describe_failure(struct ci_cell *out)
{
    static char name[128];
    static const char why[] = "the cell runner failed; no more is known";
    PyObject *type, *value, *tb;
    const char *n = "SystemError", *dot;

    PyErr_Fetch(&type, &value, &tb);
    out->outcome = CI_OUTCOME_ERROR;
    if (type && PyType_Check(type)) {
        n = ((PyTypeObject *)type)->tp_name;
        dot = strrchr(n, '.');
        n = dot ? dot + 1 : n;
        if (PyErr_GivenExceptionMatches(type, PyExc_MemoryError)) {
            out->outcome = CI_OUTCOME_MEMORY;
            n = "MemoryError"; /* as the runner names every subclass */
        } else if (PyErr_GivenExceptionMatches(type, PyExc_KeyboardInterrupt)) {
            out->outcome = CI_OUTCOME_INTERRUPT;
        }
    }
    /* Copied: the type, and its name, may go away with the reference. */
    snprintf(name, sizeof(name), "%s", n);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    out->ename = (struct ci_text){name, strlen(name)};
    out->evalue = (struct ci_text){why, sizeof(why) - 1};
}

/*
 * Interrupts. The host sends SIGINT with rt_tgsigqueueinfo(2), the number
 * of the cell it means in si_value (SI_QUEUE). A signal for the previous
 * cell can arrive after that cell ended, and one for the next cell before
 * it started (while its source is still being read): only the number
 * tells them apart, so this handler, not Python's, receives SIGINT and
 * passes on to Python (PyErr_SetInterruptEx, async-signal-safe) only the
 * one meant for the running cell. A SIGINT the cell sends itself
 * (os.kill, signal.raise_signal) is not queued and passes as always.
 */
static volatile sig_atomic_t running_cell; /* 0 between cells */
static volatile sig_atomic_t asked_cell;   /* the last cell the host interrupted */

static void on_sigint(int sig, siginfo_t *info, void *context)
{
    int saved = errno;

    (void)context;
    if (info->si_code != SI_QUEUE) {
        PyErr_SetInterruptEx(sig);
    } else {
        asked_cell = info->si_value.sival_int;
        if (asked_cell != 0 && asked_cell == running_cell)
            PyErr_SetInterruptEx(sig);
    }
    errno = saved;
}

/* (Re)installs on_sigint, unless a cell chose to ignore SIGINT or reset
 * it to the default; a Python-level handler a cell installed still runs,
 * called by Python for the interrupts on_sigint passes on. */
static void claim_sigint(void)
{
    struct sigaction now, mine;

    if (sigaction(SIGINT, NULL, &now) != 0 || now.sa_handler == SIG_IGN ||
        now.sa_handler == SIG_DFL || now.sa_sigaction == on_sigint)
        return;
    memset(&mine, 0, sizeof(mine));
    mine.sa_sigaction = on_sigint;
    mine.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&mine.sa_mask);
    sigaction(SIGINT, &mine, NULL);
}

void ci_interp_run(uint32_t count, const char *src, size_t len,
                   const struct ci_limits *limits, struct ci_cell *out)
{
    PyObject *res;

    PyEval_RestoreThread(main_ts);
    memset(out, 0, sizeof(*out));
    claim_sigint();
    running_cell = (sig_atomic_t)count;
    /* Whatever tripped Python's SIGINT flag since the last cell is stale;
     * an interrupt for this cell that came early is in asked_cell. */
    PyOS_InterruptOccurred();
    if (asked_cell == running_cell)
        PyErr_SetInterruptEx(SIGINT);
    res = PyObject_CallFunction(run_fn, "Iy#n", (unsigned int)count, src,
                                (Py_ssize_t)len, (Py_ssize_t)limits->output_limit);
    running_cell = 0;
    /* Extensions' C stdio buffers, so their output precedes the RESULT. */
    fflush(NULL);
    if (!res) {
        describe_failure(out);
    } else if (!unpack(res, limits, out)) {
        Py_DECREF(res);
        memset(out, 0, sizeof(*out));
        PyErr_SetString(PyExc_SystemError, "bad runner result");
        describe_failure(out);
    }
}

void ci_interp_cell_done(struct ci_cell *cell)
{
    Py_XDECREF((PyObject *)cell->owner);
    cell->owner = NULL;
    main_ts = PyEval_SaveThread();
}
