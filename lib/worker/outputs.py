"""A run's rich outputs, as the OUTPUTS field of a RESULT carries them.

Jupyter's messages (display_data, execute_result, update_display_data,
clear_output) come here as MIME bundles made by IPython's DisplayFormatter
(shell.py); each representation is encoded, kept within the display
limits, and appended to the run's outputs, which take() hands to the
runner as the field's payload (lib/proto.h says its format). The worker
embeds this file (tools/embed.sh) as the module _codeinterp_outputs.
"""
import base64, json, re, struct, threading

import _codeinterp as _ci

DISPLAY_DATA = _ci.OUTPUT_DISPLAY_DATA
EXECUTE_RESULT = _ci.OUTPUT_EXECUTE_RESULT
UPDATE_DISPLAY_DATA = _ci.OUTPUT_UPDATE_DISPLAY_DATA
CLEAR_OUTPUT = _ci.OUTPUT_CLEAR_OUTPUT

# The order within a message: richest first, text/plain last, so that a
# front end showing each message's first output shows its best.
_FIRST = ('image/png', 'image/jpeg', 'image/svg+xml', 'text/html',
          'text/markdown', 'text/latex', 'application/json')
_RANKED = frozenset(_FIRST + ('text/plain',))
_MIME = re.compile(r'[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+').fullmatch
_HEAD = struct.Struct('=IIIIII').pack
assert struct.calcsize('=IIIIII') == _ci.OUTPUT_HEADER_SIZE
_BIG = object()

# The limits of one session, set by configure(); these are a spare's.
_limits = {'output': 1 << 20, 'run': 1 << 22}

# The run's outputs: (data bytes, outputs, messages, omitted, chain), the
# chain a linked list of (previous, header, mime, data, display id).
# Replaced whole by one store, so an interrupt at any point leaves it
# consistent; the lock keeps two threads from replacing each other's.
_EMPTY = (0, 0, 0, 0, None)
_NONE = (b'', 0)
_now = [_EMPTY]
_lock = threading.RLock()


def configure(display_limit, run_limit):
    """The per-output and per-run limits of the session's data, in bytes."""
    _limits['output'], _limits['run'] = display_limit, run_limit


def is_text(mime):
    """ci_mime_is_text() of lib/proto.h."""
    return (mime.startswith('text/') or mime in ('application/json', 'application/javascript')
            or mime.endswith(('+json', '+xml')))


def utf8(v):
    """UTF-8 whatever the str v holds, NULs spelled out: what every text
    the worker sends is (the frames carry UTF-8 without NUL)."""
    return str.encode(v, 'utf-8', 'backslashreplace').replace(b'\0', b'\\x00')


def cut_utf8(s, limit):
    """utf8(s) cut on a character boundary at limit bytes: (bytes, cut)."""
    b = utf8(s[:limit])
    if len(s) <= limit and len(b) <= limit:
        return b, False
    return b[:limit].decode('utf-8', 'ignore').encode(), True


def size(n):
    """n bytes in words, as limits are named: 2 GiB, 768 MiB, 1.5 GiB,
    100 bytes (ci_format_size in lib/errors.c writes the same)."""
    for shift, unit in ((40, 'TiB'), (30, 'GiB'), (20, 'MiB'), (10, 'KiB')):
        if n >= 1 << shift:
            return f'{n / (1 << shift):.2f}'.rstrip('0').rstrip('.') + ' ' + unit
    return f'{n} byte' + ('s' if n != 1 else '')


def _plural(n, word):
    return f'{n} {word}' + ('s' if n != 1 else '')


def cut_middle(s, limit, what):
    """utf8(s) within limit bytes (at least 1024): (bytes, cut). A longer
    text keeps its head and its tail, cut after a line break where one is
    near, with one line between them that counts what was left out and
    names the limit, as the host marks a stream past the output limit
    (lib/output.c): the end of a traceback is its exception."""
    b, cut = cut_utf8(s, limit)
    if not cut or limit < 1024:
        return b, cut
    whole = utf8(s)
    half = (limit - 320) // 2
    # 'ignore' drops the character a byte cut splits, at either end.
    head = whole[:half].decode('utf-8', 'ignore').encode()
    tail = whole[-half:].decode('utf-8', 'ignore').encode()
    nl = head.rfind(b'\n')
    if nl >= len(head) - len(head) // 4:
        head = head[:nl + 1]
    nl = tail.find(b'\n')
    if 0 <= nl < len(tail) // 4:
        tail = tail[nl + 1:]
    left = len(whole) - len(head) - len(tail)
    lines = whole.count(b'\n', len(head), len(whole) - len(tail))
    marker = (('' if head.endswith(b'\n') else '\n')
              + f'[... {_plural(left, "byte")} ({_plural(lines, "line")}) left out: '
              f'{what} passed the output limit of {size(limit)} ...]\n')
    return head + utf8(marker[:300]) + tail, True


def encode(mime, v):
    """The bytes of one representation, None to skip it, or _BIG if it
    is over the per-output limit before it is even encoded."""
    limit = _limits['output']
    if is_text(mime):
        if isinstance(v, (dict, list)) and mime.endswith('json'):
            v = json.dumps(v)
        elif isinstance(v, (bytes, bytearray)):
            if len(v) > limit:
                return _BIG
            v = bytes(v).decode('utf-8', 'replace')
        if not isinstance(v, str):
            return None
        return _BIG if len(v) > limit else utf8(v)
    if isinstance(v, str):
        # Jupyter's JSON convention: binary data travels as base64.
        try:
            return base64.b64decode(v)
        except ValueError:
            return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    return None


def prepare(data, complain):
    """The representations of the bundle data to send, richest first, as
    [(mime, data)] of bytes, and how many are over the per-output limit.
    MIME types are case-insensitive (RFC 2045): sent in lower case. A
    representation that cannot be encoded is left out, and complain()
    called in its except clause."""
    data = {k.lower(): v for k, v in dict.items(data) if isinstance(k, str)}
    order = [k for k in _FIRST if k in data]
    order += [k for k in data if k not in _RANKED]
    if 'text/plain' in data:
        order.append('text/plain')
    items, big = [], 0
    for mime in order:
        if len(mime) > _ci.MIME_MAX or not _MIME(mime):
            continue
        try:
            b = encode(mime, data[mime])
        except Exception:
            complain()
            continue
        if b is None:
            continue
        if b is _BIG or len(b) > _limits['output']:
            big += 1
        else:
            items.append((mime.encode('ascii'), b))
    return items, big


def display_id(value):
    """The bytes of a Jupyter display id, or None for none (or one that
    cannot travel: not a str, empty, or too long)."""
    if not isinstance(value, str) or not value:
        return None
    b = utf8(value)
    return b if len(b) <= _ci.DISPLAY_ID_MAX else None


def emit(kind, items, big, ident=None):
    """One message of type kind: its outputs that fit the run's caps; the
    rest counted as omitted. ident is its display id's bytes, or None."""
    if not items and not big:
        return
    ident = ident or b''
    with _lock:
        size, count, messages, omitted, chain = _now[0]
        omitted += big
        kept = 0
        for mime, data in items:
            n = len(data)
            if size + n > _limits['run'] or count >= _ci.MAX_OUTPUTS:
                omitted += 1
                continue
            head = _HEAD(kind, messages, 0, len(ident), len(mime), n)
            chain = (chain, head, mime, data, ident)
            size, count, kept = size + n, count + 1, 1
        # Only a message with an output kept takes a number.
        _now[0] = (size, count, messages + kept, omitted, chain)


def clear(wait):
    """A clear_output message, with Jupyter's wait flag."""
    flags = _ci.OUTPUT_FLAG_WAIT if wait else 0
    with _lock:
        size, count, messages, omitted, chain = _now[0]
        if count >= _ci.MAX_OUTPUTS:
            _now[0] = (size, count, messages, omitted + 1, chain)
            return
        chain = (chain, _HEAD(CLEAR_OUTPUT, messages, flags, 0, 0, 0), b'', b'', b'')
        _now[0] = (size, count + 1, messages + 1, omitted, chain)


def take():
    """The run's OUTPUTS payload and omitted count; the next run starts
    afresh (but for what other threads display meanwhile)."""
    if _now[0] is _EMPTY:
        return _NONE
    with _lock:
        state = _now[0]
        _now[0] = _EMPTY
    parts = []
    node = state[4]
    while node is not None:
        node, head, mime, data, ident = node
        parts += (ident, data, mime, head)
    parts.reverse()
    return b''.join(parts), min(state[3], 0xFFFFFFFF)
