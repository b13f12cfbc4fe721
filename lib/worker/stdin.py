"""input() and getpass.getpass() in a cell, as Jupyter's input_request.

A kernel asks its front end for the line a cell's input() reads; the
prompt goes to the front end, not to stdout, and the answer is not
echoed. Here the host is the front end, when its run has an on_input
(ci_run_options): _codeinterp.input_request sends the prompt
(INPUT_REQUEST, lib/proto.h) from the worker's main thread and waits for
the answer, which an interrupt cuts short. Everywhere else, and whenever
the host does not answer, input() raises IPython's
StdinNotImplementedError at once, as ipykernel does for a front end that
takes no input, saying what to do instead. A cell that gave sys.stdin a
file of its own (io.StringIO of the lines, to script input() or pdb)
reads it, as in Python. The worker embeds this file (tools/embed.sh) as
_codeinterp_stdin; runner.install() calls install().
"""
import builtins, getpass as _getpass, sys

from IPython.core.error import StdinNotImplementedError

import _codeinterp as _ci
from _codeinterp_outputs import cut_utf8

NO_KEYBOARD = ('{0}() cannot read from a keyboard in this sandbox: put the value in the code'
               ' instead (a host can answer {0}() in the cell\'s main thread through'
               ' ci_run_options.on_input)')
_NOT_ANSWERED = {
    _ci.INPUT_REFUSED: 'the host did not answer {0}(): put the value in the code instead',
    _ci.INPUT_INVALID: ('the host\'s answer to {0}() was not UTF-8 text of at most'
                        f' {_ci.INPUT_REPLY_MAX} bytes: put the value in the code instead'),
    _ci.INPUT_STOPPED: '{0}() was not answered: the cell is being interrupted',
}
_EOF = '\x04'  # Ctrl-D: EOFError, as ipykernel reads it
_builtin_input = builtins.input  # Python's, which reads sys.stdin


def _prompt(prompt):
    # UTF-8 of at most INPUT_PROMPT_MAX bytes whatever the str holds,
    # NULs spelled out, cut on a character boundary.
    return cut_utf8(str(prompt), _ci.INPUT_PROMPT_MAX)[0].decode('utf-8')


def _ask(name, prompt, password):
    # What the cell printed goes first, as ipykernel flushes before it asks.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    answer = _ci.input_request(_prompt(prompt), password)
    if answer is None:
        raise StdinNotImplementedError(NO_KEYBOARD.format(name))
    status, text = answer
    if status != _ci.INPUT_ANSWERED:
        raise StdinNotImplementedError(_NOT_ANSWERED[status].format(name))
    if text == _EOF:
        raise EOFError
    return text


def input(prompt=''):
    """The host's answer to the prompt, as Jupyter's input(); the prompt is
    not written to stdout. From a sys.stdin the cell set, Python's."""
    if sys.stdin is not sys.__stdin__:
        return _builtin_input(prompt)
    return _ask('input', prompt, False)


def getpass(prompt='Password: ', stream=None):
    """input() for a secret: the host is told not to show the answer. As
    in ipykernel, stream is not used."""
    return _ask('getpass', prompt, True)


def install():
    builtins.input = input
    _getpass.getpass = getpass
