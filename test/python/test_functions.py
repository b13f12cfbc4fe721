"""Host functions as a cell sees them (lib/worker/functions.py), with the
host's side of _codeinterp.host_call played here."""
import builtins
import sys

import pytest

import _codeinterp as ci
from conftest import functions


@pytest.fixture
def host(monkeypatch):
    """Answers host_call with host.answer and keeps each call in
    host.calls; the argument limit is 4096 bytes."""
    class Host:
        answer = (ci.CALL_RETURNED, b'{"ok":true}', None)
        calls = []

    def host_call(name, data):
        assert isinstance(name, str) and isinstance(data, bytes)
        Host.calls.append((name, data))
        return Host.answer
    Host.calls = []
    monkeypatch.setattr(ci, 'host_call', host_call, raising=False)
    monkeypatch.setitem(functions._limits, 'args', 4096)
    return Host


def test_arguments_are_compact_json_in_the_cells_order(host):
    assert functions.call('f', (1, 'x', (2.5, None)), {'region': 'EMEA', 'b': True}) == {
        'ok': True}
    assert host.calls == [('f', b'{"args":[1,"x",[2.5,null]],'
                                b'"kwargs":{"region":"EMEA","b":true}}')]
    assert functions.encode('f', ('caf\u00e9',), {}) == (
        b'{"args":["caf\xc3\xa9"],"kwargs":{}}')


@pytest.mark.parametrize('value, where, what', [
    (float('nan'), 'argument 1', 'the float nan'),
    (b'x', 'argument 1', 'a value of type bytes'),
    ([1, {2}], 'argument 1[1]', 'a value of type set'),
    ({'k': {1: 2}}, "argument 1['k'] key 1", 'a key of type int'),
    (-2**63 - 1, 'argument 1', 'the int -9223372036854775809 (over 64 bits)'),
    ('\ud800', 'argument 1', 'a str with a lone surrogate'),
    ({'\udc80': 1}, 'argument 1 key', 'a str with a lone surrogate'),
])
def test_what_json_cannot_hold_is_a_type_error(host, value, where, what):
    with pytest.raises(TypeError) as e:
        functions.call('f', (value,), {})
    assert str(e.value) == f'f() {where}: {what} is not JSON; a host function takes ' + \
        functions.JSON_ALLOWS
    assert host.calls == []


def test_nesting_and_cycles_are_a_value_error(host):
    deep = []
    for _ in range(functions.DEPTH_MAX - 1):
        deep = [deep]
    functions.call('f', (deep,), {})  # the innermost list is level DEPTH_MAX
    with pytest.raises(ValueError, match=r'^f\(\) argument 1: nested deeper than 512 levels'):
        functions.call('f', ([deep],), {})
    loop = {}
    loop['self'] = loop
    with pytest.raises(ValueError, match='or holds itself'):
        functions.call('f', (), {'x': loop})
    assert len(host.calls) == 1


def test_arguments_over_the_limit_are_a_value_error(host):
    functions.call('f', ('x' * (4096 - 25),), {})
    with pytest.raises(ValueError) as e:
        functions.call('f', ('x' * (4096 - 24),), {})
    assert str(e.value) == ("the arguments of f() are 4097 bytes of JSON, over the host's"
                            " limit of 4 KiB")
    assert len(host.calls) == 1


def test_the_hosts_answers(host):
    host.answer = (ci.CALL_RAISED, 'KeyError', 'no such region')
    with pytest.raises(KeyError, match='no such region'):
        functions.call('f', (), {})
    host.answer = (ci.CALL_RAISED, 'UnicodeDecodeError', 'takes five arguments')
    with pytest.raises(functions.HostFunctionError) as e:
        functions.call('f', (), {})
    assert (e.value.function, e.value.exception_name, e.value.message) == (
        'f', 'UnicodeDecodeError', 'takes five arguments')
    host.answer = (ci.CALL_RAISED, 'SystemExit', 'bye')
    with pytest.raises(functions.HostFunctionError, match='f\\(\\) raised SystemExit: bye'):
        functions.call('f', (), {})
    host.answer = (ci.CALL_FAILED, 'the host function f() gave no answer', None)
    with pytest.raises(functions.HostFunctionError) as e:
        functions.call('f', (), {})
    assert str(e.value) == 'the host function f() gave no answer'
    assert e.value.exception_name is None
    host.answer = (ci.CALL_STOPPED, None, None)
    with pytest.raises(KeyboardInterrupt, match='the cell is being interrupted'):
        functions.call('f', (), {})


def test_define_makes_builtins_and_the_module(host, monkeypatch):
    monkeypatch.delitem(sys.modules, 'codeinterp_host', raising=False)
    try:
        functions.define([('lookup', 'Finds things.'), ('other', '')], 2048, 4096)
        import codeinterp_host
        assert builtins.lookup is codeinterp_host.lookup
        assert builtins.lookup.__doc__ == 'Finds things.'
        assert builtins.other.__doc__ is None
        assert codeinterp_host.__all__ == ['lookup', 'other', 'HostFunctionError']
        assert builtins.HostFunctionError is functions.HostFunctionError
        assert functions._limits['args'] == 2048
        assert codeinterp_host.lookup(3) == {'ok': True}
        assert host.calls == [('lookup', b'{"args":[3],"kwargs":{}}')]
    finally:
        for name in ('lookup', 'other', 'HostFunctionError'):
            builtins.__dict__.pop(name, None)
