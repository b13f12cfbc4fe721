"""The cell runner's own functions (lib/worker/runner.py), outside a worker."""
import struct

import pytest

import _codeinterp as ci
from conftest import c_constants, exported_constants, ipython, outputs as out, runner


@pytest.fixture
def ns():
    """The shell's namespace, emptied of what each test adds, and small
    display limits."""
    space = ipython.user_ns
    before = set(space)
    out.configure(1000, 1500)
    out.take()
    yield space
    out.take()
    out.configure(1 << 20, 1 << 22)
    for name in set(space) - before:
        del space[name]


def messages(payload):
    """The OUTPUTS payload as [(type, message, mime, data)], checking
    that each header's flags and display id are the ones a display_data
    or execute_result has."""
    return [(k, n, m, d) for k, n, f, i, m, d in full_messages(payload)]


def full_messages(payload):
    """The OUTPUTS payload as [(type, message, flags, id, mime, data)]."""
    head = struct.Struct('=IIIIII')
    items, at = [], 0
    while at < len(payload):
        kind, message, flags, ilen, mlen, dlen = head.unpack_from(payload, at)
        at += head.size
        mime = payload[at:at + mlen].decode('ascii')
        data = payload[at + mlen:at + mlen + dlen]
        ident = payload[at + mlen + dlen:at + mlen + dlen + ilen].decode()
        at += mlen + dlen + ilen
        items.append((kind, message, flags, ident or None, mime, data))
    assert at == len(payload)
    return items


def test_every_shared_constant_has_one_value_in_the_headers():
    values = c_constants()
    names = exported_constants()
    assert 'CI_FIELD_VALUE' in names and 'CI_OUTCOME_MEMORY' in names
    for name in names:
        assert getattr(ci, name[3:]) == values[name]
    assert (ci.OUTCOME_OK, ci.OUTCOME_ERROR, ci.OUTCOME_MEMORY, ci.OUTCOME_INTERRUPT) == (0, 1, 2, 3)


def test_text_within_the_limit_is_whole_and_spells_out_nul():
    assert runner._text('abc', 1024, 'the value') == (b'abc', False)
    assert runner._text('a\0b', 1024, 'the value') == (b'a\\x00b', False)
    # a lone surrogate cannot be UTF-8: it is escaped, not an error
    assert runner._text('\ud800', 1024, 'the value') == (b'\\ud800', False)


def test_a_long_text_keeps_head_and_tail_around_a_counting_line():
    tb = ''.join(f'  line {i}\n' for i in range(1000)) + 'KeyError: last\n'
    got, cut = runner._text(tb, 2048, 'the traceback')
    assert cut and len(got) <= 2048
    head, rest = got.split(b'[... ', 1)
    counts, tail = rest.split(b'\n', 1)
    whole = tb.encode()
    assert whole.startswith(head) and head.endswith(b'\n')
    assert whole.endswith(tail) and tail.endswith(b'KeyError: last\n')
    assert tail.startswith(b'  line ')
    left = len(whole) - len(head) - len(tail)
    lines = whole.count(b'\n', len(head), len(whole) - len(tail))
    assert counts == (f'{left} bytes ({lines} lines) left out: the traceback passed the '
                      'output limit of 2 KiB ...]').encode()


def test_a_cut_text_is_whole_characters():
    got, cut = runner._text('a' + 'é' * 3000, 1024, 'the value')
    assert cut and len(got) <= 1024
    text = got.decode('utf-8')
    assert text.startswith('a' + 'é' * 10) and text.endswith('é' * 10)
    assert '\n[... ' in text and ' left out: the value passed the output limit of 1 KiB ...]\n' in text


@pytest.mark.parametrize('cell, silenced', [
    ('1;', True), ('1 ;  # comment', True), ('1', False), ('1  # a; b', False),
    ('x = 1\nx;\n\n', True), ('"a;"', False),
])
def test_a_trailing_semicolon_silences_the_last_expression(cell, silenced):
    import ast
    tree = ast.parse(cell)
    assert runner._silenced(runner._lines(cell), tree.body[-1]) is silenced


def test_execute_returns_the_last_expression_and_keeps_state(ns):
    assert runner._execute(1, '<cell 1>', b'x = 40') is None
    assert runner._execute(2, '<cell 2>', b'x + 2') == '42'
    assert ns['_'] == 42 and ns['_2'] == 42 and ns['Out'][2] == 42
    assert runner._execute(3, '<cell 3>', b'x;') is None
    assert runner._execute(4, '<cell 4>', b'None') is None
    assert ns['In'][1:5] == ['x = 40', 'x + 2', 'x;', 'None']
    assert ns['_i2'] == 'x + 2' and ns['_i'] == 'x;' and ns['_ii'] == 'x + 2'


def test_a_value_with_rich_forms_is_an_execute_result(ns):
    runner._execute(1, '<cell 1>', b'class T:\n'
                    b'    def __repr__(self): return "plain"\n'
                    b'    def _repr_html_(self): return "<b>rich</b>"\n')
    assert runner._execute(2, '<cell 2>', b'T()') == 'plain'
    payload, omitted = out.take()
    assert omitted == 0
    assert messages(payload) == [(ci.OUTPUT_EXECUTE_RESULT, 0, 'text/html', b'<b>rich</b>')]


def test_prepare_orders_richest_first_and_drops_what_is_not_a_mime_type(ns):
    items, big = out.prepare({'text/plain': 'p', 'TEXT/HTML': '<i>h</i>',
                                  'image/png': b'\x89PNG', 'not a type': 'x',
                                  'application/x-thing': b'raw', 'application/x-b64': 'eQ==',
                                  'application/x-bad': 'y', 'text/latex': 'z' * 2000}, None)
    assert [m for m, _ in items] == [b'image/png', b'text/html', b'application/x-thing',
                                    b'application/x-b64', b'text/plain']
    # binary data given as text is base64, as in Jupyter's JSON; bad base64 is dropped
    assert dict(items)[b'application/x-b64'] == b'y'
    assert big == 1  # text/latex is over the per-output limit
    assert dict(items)[b'image/png'] == b'\x89PNG'


def test_emit_numbers_messages_and_keeps_to_the_run_limit(ns):
    out.emit(ci.OUTPUT_DISPLAY_DATA, [(b'text/plain', b'a' * 600)], 0)
    out.emit(ci.OUTPUT_DISPLAY_DATA, [(b'text/plain', b'b' * 600)], 0)
    # over the run's 1500 bytes: left out, and its message takes no number
    out.emit(ci.OUTPUT_DISPLAY_DATA, [(b'text/plain', b'c' * 600)], 0)
    out.emit(ci.OUTPUT_DISPLAY_DATA, [(b'text/html', b'd'), (b'text/plain', b'e')], 2)
    payload, omitted = out.take()
    assert omitted == 3
    assert [(k, n, m, len(d)) for k, n, m, d in messages(payload)] == [
        (1, 0, 'text/plain', 600), (1, 1, 'text/plain', 600),
        (1, 2, 'text/html', 1), (1, 2, 'text/plain', 1)]
    assert out.take() == (b'', 0)


def test_run_returns_the_fields_by_their_tags(ns):
    runner._refusals.take()  # what other tests' refusals left
    fields = runner.run(1, b'print("hi")\n6 * 7', 100)
    assert fields == {ci.FIELD_OUTCOME: ci.OUTCOME_OK, ci.FIELD_FLAGS: 0,
                      ci.FIELD_VALUE: b'42', ci.FIELD_ENAME: None, ci.FIELD_EVALUE: None,
                      ci.FIELD_TRACEBACK: None, ci.FIELD_TRACEBACK_FULL: None,
                      ci.FIELD_OUTPUTS: b'', ci.FIELD_OMITTED: 0,
                      ci.FIELD_REFUSALS: None}


def test_run_reports_an_error_with_the_cell_frames_only(ns):
    fields = runner.run(3, b'def f():\n    1 / 0\nf()', 10000)
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_ERROR
    assert fields[ci.FIELD_ENAME] == b'ZeroDivisionError'
    assert fields[ci.FIELD_EVALUE] == b'division by zero'
    tb = fields[ci.FIELD_TRACEBACK].decode()
    assert tb.startswith('Traceback (most recent call last):\n  File "<cell 3>", line 3')
    assert 'runner.py' not in tb and tb.count('File "<cell 3>"') == 2


def test_the_whole_traceback_is_sent_only_when_the_traceback_is_folded(ns):
    fields = runner.run(5, b'import json\njson.loads("{")', 1 << 16)
    folded = fields[ci.FIELD_TRACEBACK].decode()
    full = fields[ci.FIELD_TRACEBACK_FULL].decode()
    assert '    ... 2 frames in json/__init__.py, json/decoder.py ...\n' in folded
    assert 'json/__init__.py", line' in full and '    ...' not in full
    assert folded.splitlines()[-1] == full.splitlines()[-1]
    fields = runner.run(6, b'1 / 0', 1 << 16)
    assert fields[ci.FIELD_TRACEBACK] and fields[ci.FIELD_TRACEBACK_FULL] is None


def test_a_chained_exception_loses_the_worker_frames_of_each_part(ns):
    # builtins.exit() is the runner's: its frame, in the first part, goes.
    fields = runner.run(7, b'import builtins\ntry:\n    builtins.exit(3)\n'
                        b'except SystemExit:\n    raise ValueError("again")', 1 << 16)
    tb = fields[ci.FIELD_TRACEBACK].decode()
    assert 'During handling of the above exception' in tb and 'SystemExit: 3' in tb
    assert tb.count('File "<cell 7>"') == 2 and 'in __call__' not in tb
    assert fields[ci.FIELD_TRACEBACK_FULL] is None


def test_every_memory_error_is_named_memory_error(ns):
    fields = runner.run(1, b'class Big(MemoryError): pass\nraise Big("no room")', 100)
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_MEMORY
    assert fields[ci.FIELD_ENAME] == b'MemoryError'
    assert fields[ci.FIELD_EVALUE] == b'no room'


def test_a_long_text_field_is_cut_and_flagged(ns):
    fields = runner.run(1, b'"x" * 5000', 1024)
    value = fields[ci.FIELD_VALUE]
    assert len(value) <= 1024 and value.startswith(b"'" + b'x' * 300)
    assert b'\n[... ' in value and value.endswith(b'x' * 300 + b"'")
    assert fields[ci.FIELD_FLAGS] == ci.FLAG_TRUNCATED


def test_a_syntax_error_shows_the_line(ns):
    fields = runner.run(2, b'x = (1,\n', 1000)
    assert fields[ci.FIELD_ENAME] == b'SyntaxError'
    assert b'File "<cell 2>", line 1' in fields[ci.FIELD_TRACEBACK]


def test_open_figures_are_shown_and_closed(ns):
    import matplotlib.pyplot as plt
    out.configure(1 << 20, 1 << 20)
    fields = runner.run(1, b'import matplotlib.pyplot as plt\nplt.plot([1, 2]);', 100)
    items = messages(fields[ci.FIELD_OUTPUTS])
    assert [(k, n, m) for k, n, m, _ in items] == [
        (ci.OUTPUT_DISPLAY_DATA, 0, 'image/png'), (ci.OUTPUT_DISPLAY_DATA, 0, 'text/plain')]
    assert items[0][3].startswith(b'\x89PNG\r\n\x1a\n')
    assert plt.get_fignums() == []
