"""Host functions in a cell (ci_config_add_function).

A host gives a session functions of its own: query_sales(region='EMEA')
in a cell runs the host's query_sales and returns its value, without the
worker ever holding what the host uses to answer (a key, a connection).
The call crosses the worker's channel (CALL and CALL_REPLY, lib/proto.h)
through _codeinterp.host_call; the arguments and the value travel as
JSON, which this module checks and encodes on the way out and decodes on
the way back. The host checks the arguments again: nothing here is a
boundary.

The worker embeds this file (tools/embed.sh) as _codeinterp_functions;
the FUNCTIONS frame, once before the first cell, calls define(), which
makes each function a builtin and an attribute of the module
codeinterp_host.
"""
import builtins, json, math, sys, types

import _codeinterp as _ci
from _codeinterp_outputs import size as _size

JSON_ALLOWS = ('None, bool, int (of at most 64 bits), float (finite), str, and list,'
               ' tuple or dict (with str keys) of those')
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1
# Well within the nesting the host's JSON parser takes (jansson's 2048).
DEPTH_MAX = 512
_limits = {'args': 0}


class HostFunctionError(Exception):
    """A host function failed. function is its name; exception_name the
    name of the exception the host raised (None when the host gave no
    answer it could pass on); message what the host said."""

    def __init__(self, function, exception_name, message):
        super().__init__(function, exception_name, message)
        self.function = function
        self.exception_name = exception_name
        self.message = message

    def __str__(self):
        if self.exception_name is None:
            return self.message
        return f'{self.function}() raised {self.exception_name}: {self.message}'


def _not_json(function, where, what):
    return TypeError(f'{function}() {where}: {what} is not JSON; a host function takes'
                     f' {JSON_ALLOWS}')


def _clean(function, value, where, depth):
    # A copy of value made of the builtin types alone, which json.dumps
    # writes as RFC 8259 JSON the host's parser takes: the copy is what is
    # sent, so a subclass cannot show the check one value and the encoder
    # another (an int whose comparisons lie, a list whose __iter__ hides
    # its items, str keys equal but unequal). TypeError for anything JSON
    # cannot hold, ValueError past DEPTH_MAX (a cycle too) or for two keys
    # of the same text.
    if depth > DEPTH_MAX:  # named by its argument alone, not by 512 subscripts
        raise ValueError(f'{function}() {where.split("[", 1)[0]}: nested deeper than'
                         f' {DEPTH_MAX} levels (or holds itself)')
    if value is None or isinstance(value, bool):
        return value  # bool has no subclasses
    if isinstance(value, int):
        value = int.__int__(value)
        if not _INT_MIN <= value <= _INT_MAX:
            raise _not_json(function, where, f'the int {value} (over 64 bits)')
        return value
    if isinstance(value, float):
        value = float.__float__(value)
        if not math.isfinite(value):
            raise _not_json(function, where, f'the float {value!r}')
        return value
    if isinstance(value, str):
        return _text(function, value, where)
    if isinstance(value, (list, tuple)):
        return [_clean(function, item, f'{where}[{i}]', depth + 1)
                for i, item in enumerate(value)]
    if isinstance(value, dict):
        copy = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _not_json(function, f'{where} key {key!r}',
                                f'a key of type {type(key).__name__}')
            key = _text(function, key, f'{where} key')
            if key in copy:
                raise ValueError(f'{function}() {where}: two keys are {key!r}')
            copy[key] = _clean(function, item, f'{where}[{key!r}]', depth + 1)
        return copy
    raise _not_json(function, where, f'a value of type {type(value).__name__}')


def _text(function, s, where):
    # s as a str of its own, which must be UTF-8.
    s = str.__str__(s)
    try:
        s.encode('utf-8')
    except UnicodeEncodeError:
        raise _not_json(function, where, 'a str with a lone surrogate') from None
    return s


def encode(function, args, kwargs):
    """The JSON bytes of a call's arguments, as the host takes them:
    {"args": [...], "kwargs": {...}}, compact, UTF-8. TypeError for a value
    JSON cannot hold, ValueError over the host's argument limit."""
    args = [_clean(function, a, f'argument {i + 1}', 1) for i, a in enumerate(args)]
    named = {}
    for k, v in kwargs.items():
        key = _text(function, k, f'argument {k!r} name')
        if key in named:
            raise ValueError(f'{function}() argument {key!r}: given twice')
        named[key] = _clean(function, v, f'argument {key!r}', 1)
    kwargs = named
    data = json.dumps({'args': args, 'kwargs': kwargs}, ensure_ascii=False,
                      separators=(',', ':'), allow_nan=False,
                      check_circular=False).encode('utf-8')
    if len(data) > _limits['args']:
        raise ValueError(f'the arguments of {function}() are {len(data)} bytes of JSON,'
                         f' over the host\'s limit of {_size(_limits["args"])}')
    return data


def _exception(function, name, message):
    # The builtin exception the host named, if there is one to raise with
    # a message; else HostFunctionError.
    kind = getattr(builtins, name, None) if name.isidentifier() else None
    if isinstance(kind, type) and issubclass(kind, Exception) and kind is not HostFunctionError:
        try:
            return kind(message)
        except Exception:
            pass
    return HostFunctionError(function, name, message)


def call(function, args, kwargs):
    """Calls host function function: its value, or what it raised."""
    status, a, b = _ci.host_call(function, encode(function, args, kwargs))
    if status == _ci.CALL_RETURNED:
        return json.loads(a.decode('utf-8'))
    if status == _ci.CALL_RAISED:
        raise _exception(function, a, b)
    if status == _ci.CALL_FAILED:
        raise HostFunctionError(function, None, a)
    raise KeyboardInterrupt(f'{function}() was not answered: the cell is being interrupted')


def _function(name, doc):
    def host_function(*args, **kwargs):
        return call(name, args, kwargs)
    host_function.__name__ = host_function.__qualname__ = name
    host_function.__module__ = 'codeinterp_host'
    host_function.__doc__ = doc or None
    return host_function


def define(defs, args_limit, result_limit):
    """Makes each (name, description) of defs a builtin and an attribute
    of codeinterp_host, with the host's argument limit (bytes of JSON; the
    host holds values to result_limit itself)."""
    _limits['args'] = args_limit
    module = types.ModuleType('codeinterp_host', 'The host functions of this session.')
    module.HostFunctionError = HostFunctionError
    HostFunctionError.__module__ = 'codeinterp_host'
    builtins.HostFunctionError = HostFunctionError
    for name, doc in defs:
        f = _function(name, doc)
        setattr(module, name, f)
        setattr(builtins, name, f)
    module.__all__ = [name for name, _ in defs] + ['HostFunctionError']
    sys.modules['codeinterp_host'] = module
