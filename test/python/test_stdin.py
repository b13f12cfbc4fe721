"""input() and getpass() as a cell sees them (lib/worker/stdin.py), with
the host's side of _codeinterp.input_request played here."""
import builtins
import getpass
import io
import re
import sys

import pytest
from IPython.core.error import StdinNotImplementedError

import _codeinterp as ci
from conftest import stdin


@pytest.fixture
def host(monkeypatch):
    """Answers input_request with what the test puts in host.answer (None:
    the host is not asked) and keeps each request in host.asked; sys.stdin
    is the process's own (pytest replaces it), as in a cell."""
    class Host:
        answer = (ci.INPUT_ANSWERED, '42')
        asked = []

    def request(prompt, password):
        assert isinstance(prompt, str) and isinstance(password, bool)
        Host.asked.append((prompt, password))
        return Host.answer
    Host.asked = []
    monkeypatch.setattr(ci, 'input_request', request, raising=False)
    monkeypatch.setattr(sys, 'stdin', sys.__stdin__)
    return Host


def test_installed_as_the_builtin_and_getpass():
    # conftest installed the runner, which installs these.
    assert builtins.input is stdin.input
    assert getpass.getpass is stdin.getpass


def test_the_answer_is_returned_for_the_prompt(host):
    assert int(stdin.input('n? ')) * 2 == 84
    assert stdin.getpass() == '42'
    assert host.asked == [('n? ', False), ('Password: ', True)]


def test_without_a_host_it_says_what_to_do(host):
    host.answer = None
    with pytest.raises(StdinNotImplementedError) as e:
        stdin.input()
    assert str(e.value) == stdin.NO_KEYBOARD.format('input')
    assert 'put the value in the code' in str(e.value)
    assert 'ci_run_options.on_input' in str(e.value)
    with pytest.raises(StdinNotImplementedError, match=r'^getpass\(\) cannot read'):
        stdin.getpass()


@pytest.mark.parametrize('status, words', [
    (ci.INPUT_REFUSED, 'the host did not answer input()'),
    (ci.INPUT_INVALID, f'at most {ci.INPUT_REPLY_MAX} bytes'),
    (ci.INPUT_STOPPED, 'the cell is being interrupted'),
])
def test_each_refusal_names_its_cause(host, status, words):
    host.answer = (status, '')
    with pytest.raises(StdinNotImplementedError, match=re.escape(words)):
        stdin.input()


def test_ctrl_d_is_eof(host):
    host.answer = (ci.INPUT_ANSWERED, '\x04')
    with pytest.raises(EOFError):
        stdin.input()


def test_prompt_is_utf8_within_the_cap(host):
    stdin.input('\u00e9' * 5000)
    stdin.input(7)
    stdin.input('a\0b\udc80')
    long, seven, odd = (p for p, _ in host.asked)
    assert len(long.encode()) == ci.INPUT_PROMPT_MAX and set(long) == {'\u00e9'}
    assert seven == '7'
    assert odd == 'a\\x00b\\udc80'


def test_a_stdin_the_cell_set_is_read_as_in_python(host, monkeypatch, capsys):
    monkeypatch.setattr(sys, 'stdin', io.StringIO('7\nsecond\n'))
    assert stdin.input('n? ') == '7'
    assert stdin.input() == 'second'
    with pytest.raises(EOFError):
        stdin.input()
    assert host.asked == []
    assert capsys.readouterr().out == 'n? '  # Python's input() writes its prompt
