"""Snapshots' interpreter part (lib/worker/snapshot.py), outside a worker."""
import io
import pickle
import random
import threading

import numpy as np
import pytest

import _codeinterp as ci
from conftest import ipython, snapshot


@pytest.fixture
def ns():
    """The shell's namespace, emptied of what each test adds."""
    space = ipython.user_ns
    before = dict(space)
    yield space
    for name in set(space) - set(before):
        del space[name]
    space.update(before)


def take():
    fields = snapshot.take(1 << 20)
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_OK, fields
    left = fields[ci.FIELD_LEFT_OUT]
    return fields[ci.FIELD_STATE], fields[ci.FIELD_PACKAGES], left.decode() if left else ''


def restore(state, packages):
    return snapshot.restore(packages, state, 1 << 20)


def test_history_names():
    assert snapshot._history_name('_3') and snapshot._history_name('_i12')
    assert not snapshot._history_name('_x') and not snapshot._history_name('_i')
    assert not snapshot._history_name('data_1') and not snapshot._history_name('_')


def test_why_not():
    assert snapshot._why_not((i for i in ())) == 'a generator in flight'
    f = io.BytesIO()
    assert snapshot._why_not(f) == 'an open file'
    f.close()
    assert snapshot._why_not(f) == 'a closed file'
    assert snapshot._why_not(threading.Thread(target=print)) == 'a thread'
    assert snapshot._why_not([1]) is None and snapshot._why_not(3) is None


def test_a_round_trip_keeps_values_and_names_what_is_left_out(ns):
    ns['numbers'] = [1, 2, 3]
    ns['alias'] = ns['numbers']
    ns['gen'] = (i for i in range(2))
    ns['deep'] = {'inner': [(i for i in range(2))]}
    random.seed(11)
    np.random.seed(11)
    state, packages, left = take()
    lines = left.splitlines()
    assert 'deep: a generator in flight' in lines and 'gen: a generator in flight' in lines
    assert not any(line.startswith(('numbers:', 'alias:')) for line in lines)
    want = (random.random(), float(np.random.rand()))
    for name in ('numbers', 'alias', 'gen', 'deep'):
        del ns[name]
    fields = restore(state, packages)
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_OK, fields
    assert ns['numbers'] == [1, 2, 3] and ns['alias'] is ns['numbers']
    assert 'gen' not in ns and 'deep' not in ns
    assert (random.random(), float(np.random.rand())) == want


def stream(state):
    """The pickles of a state: its head, then its entries."""
    __import__('dill')  # the module its pickles name
    unpickler = pickle.Unpickler(io.BytesIO(state))
    head, entries = unpickler.load(), []
    while (entry := unpickler.load()) is not None:
        entries.append(entry)
    return head, entries


def test_ipython_names_are_not_carried(ns):
    state, packages, left = take()
    names = [key for kind, key, value in stream(state)[1] if kind == 'name']
    for name in ('In', 'Out', '_ih', '_oh', 'get_ipython', 'exit', 'quit', '__builtins__'):
        assert name not in names


def test_definitions_load_first_and_rebuilding_finds_them(ns):
    exec("class Pinged:\n"
         "    def __init__(self, v): self.v = v\n"
         "    def __reduce__(self): return (make_pinged, (self.v,))\n"
         "def make_pinged(v):\n"
         "    return Pinged(v)\n", ns)
    ns['ping'] = ns['make_pinged'](5)
    ns['ping_again'] = ns['ping']
    state, packages, left = take()
    kinds = [(kind, key) for kind, key, value in stream(state)[1]]
    assert kinds.index(('name', 'Pinged')) < kinds.index(('name', 'ping'))
    for name in ('Pinged', 'make_pinged', 'ping', 'ping_again'):
        del ns[name]
    fields = restore(state, packages)
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_OK, fields
    assert ns['ping'].v == 5 and type(ns['ping']) is ns['Pinged']
    assert ns['ping_again'] is ns['ping']


def test_bytes_after_the_end_are_refused(ns):
    state, packages, left = take()
    fields = restore(state + b'.', packages)
    assert fields[ci.FIELD_ENAME] == b'SnapshotError'
    assert b'bytes after its end' in fields[ci.FIELD_EVALUE]


def test_the_package_set_lists_python_and_numpy():
    lines = snapshot.packages().splitlines()
    assert lines[0].startswith('python 3.')
    assert any(line.startswith('numpy ') for line in lines[1:])
    assert lines[1:] == sorted(lines[1:])


def test_a_state_needs_the_distributions_of_the_modules_it_names(ns):
    import numpy as np
    import pandas as pd
    ns['frame'] = pd.DataFrame({'a': np.arange(3)})
    state, packages, left = take()
    names = {line.split(' ')[0] for line in packages.decode().splitlines()[1:]}
    assert {'numpy', 'pandas', 'dill'} <= names
    # Not every distribution installed: only those the pickles name.
    assert len(names) < len(snapshot.packages().splitlines()) - 1
    assert snapshot.packages({'numpy'}).splitlines()[1:] == [
        line for line in snapshot.packages().splitlines()[1:] if line.startswith('numpy ')]


def test_other_distributions_here_do_not_matter(ns):
    state, packages, left = take()
    lines = packages.decode().splitlines()
    fields = restore(state, ('\n'.join(lines[:1]) + '\n').encode())
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_OK, fields
    fields = restore(state, packages + b'nothing-installed-here 1.0\n')
    assert b'nothing-installed-here 1.0 in the snapshot, absent here' in fields[ci.FIELD_EVALUE]
    other = packages.replace(b'python 3.', b'python 2.', 1)
    fields = restore(state, other)
    assert b'python 2.' in fields[ci.FIELD_EVALUE] and b' in the snapshot, python 3.' in \
        fields[ci.FIELD_EVALUE]


def test_another_package_set_is_named(ns):
    state, packages, left = take()
    fields = restore(state, packages + b'numpy 0.0.1\n')
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_ERROR
    assert fields[ci.FIELD_ENAME] == b'SnapshotError'
    assert b'numpy 0.0.1 in the snapshot, ' in fields[ci.FIELD_EVALUE]


@pytest.mark.parametrize('packages, state', [(b'', b''), (b'python 3', b''), (b'', b'x')])
def test_a_cut_payload_is_an_error(packages, state):
    fields = snapshot.restore(packages, state, 1 << 20)
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_ERROR
    assert fields[ci.FIELD_ENAME] == b'SnapshotError'


def test_a_state_of_another_shape_is_refused(ns):
    packages = snapshot.packages().encode()
    for state in (pickle.dumps([1, 2]), pickle.dumps({'format': 99})):
        fields = restore(state, packages)
        assert fields[ci.FIELD_ENAME] == b'SnapshotError'
        assert b'not one this worker reads' in fields[ci.FIELD_EVALUE]


def test_the_input_history_names_come_back(ns):
    history = ipython.history_manager
    saved = list(history.input_hist_raw), list(history.input_hist_parsed)
    history.input_hist_raw[:] = ['', 'a = 1', 'b = 2', 'a + b']
    history.input_hist_parsed[:] = list(history.input_hist_raw)
    try:
        state, packages, left = take()
        ns['_i'] = ns['_ii'] = ns['_iii'] = None
        fields = restore(state, packages)
        assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_OK, fields
        assert (ns['_i'], ns['_ii'], ns['_iii']) == ('b = 2', 'a = 1', '')
        assert history._i00 == 'a + b' and ns['_i3'] == 'a + b'
    finally:
        history.input_hist_raw[:], history.input_hist_parsed[:] = saved


def test_an_interrupt_while_pickling_is_the_outcome(ns):
    class Stop:
        def __reduce__(self):
            raise KeyboardInterrupt

    ns['stop'] = Stop()
    fields = snapshot.take(1 << 20)
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_INTERRUPT
    assert ci.FIELD_STATE not in fields
