"""The folding of tracebacks (lib/worker/tracebacks.py), and the runner's
use of it, outside a worker."""
import os
import traceback

from conftest import tracebacks as tb

STDLIB = os.path.dirname(os.__file__)


def frame(filename, name='f', line='x = 1'):
    return traceback.FrameSummary(filename, 1, name, lookup_line=False, line=line)


def cell_frame(n=1):
    return frame(f'<cell {n}>', '<module>')


def lines(stack):
    return ''.join(stack.format()).splitlines()


def test_short_names_drop_the_directories_an_import_searches():
    assert tb.short(f'{STDLIB}/urllib/request.py') == 'urllib/request.py'
    assert tb.short('/usr/lib/python3/dist-packages/pandas/core/frame.py') == 'pandas/core/frame.py'
    assert tb.short('/opt/venv/lib/python3.11/site-packages/a/b.py') == 'a/b.py'
    assert tb.short('pandas/_libs/index.pyx') == 'pandas/_libs/index.pyx'
    assert tb.short('<cell 3>') == '<cell 3>'


def test_own_frames_are_the_cells_and_the_workspaces():
    assert tb.own('<cell 12>') and tb.own('<timed exec>')
    assert tb.own('/s/workspace/helper.py', '/s/workspace')
    assert not tb.own('/s/workspace2/x.py', '/s/workspace')
    assert not tb.own(f'{STDLIB}/json/decoder.py', '/s/workspace')
    assert not tb.own('/s/workspace/helper.py')


def test_the_fold_line_counts_the_frames_and_names_three_files_at_most():
    names = ['a.py', 'b.py', 'a.py', 'c.py', 'd.py', 'e.py']
    assert tb.fold_line([frame(f'{STDLIB}/{n}') for n in names[:3]]) == \
        '    ... 3 frames in a.py, b.py ...\n'
    assert tb.fold_line([frame(f'{STDLIB}/{n}') for n in names]) == \
        '    ... 6 frames in a.py, b.py, c.py and 2 more ...\n'
    assert tb.fold_line([frame('x.py')]) == '    ... 1 frame in x.py ...\n'


def test_library_frames_between_the_cell_and_the_raiser_are_one_line():
    raiser = frame(f'{STDLIB}/socket.py', 'getaddrinfo', 'raise OSError')
    stack = [cell_frame()] + [frame(f'{STDLIB}/urllib/request.py')] * 3 + \
        [frame(f'{STDLIB}/http/client.py')] * 4 + [raiser]
    assert lines(tb.fold(stack, lambda f: tb.own(f.filename))) == [
        '  File "<cell 1>", line 1, in <module>', '    x = 1',
        '    ... 7 frames in urllib/request.py, http/client.py ...',
        f'  File "{STDLIB}/socket.py", line 1, in getaddrinfo', '    raise OSError']


def test_the_cells_frames_stay_wherever_they_stand():
    stack = [frame('/p/a.py'), cell_frame(), frame('/p/b.py'), frame('/p/c.py'),
             frame('<cell 1>', 'g'), frame('/p/d.py')]
    folded = lines(tb.fold(stack, lambda f: tb.own(f.filename)))
    assert [x for x in folded if x.startswith('    ...')] == [
        '    ... 1 frame in /p/a.py ...', '    ... 2 frames in /p/b.py, /p/c.py ...']
    assert folded[-2:] == ['  File "/p/d.py", line 1, in f', '    x = 1']
    assert sum(x.startswith('  File "<cell 1>"') for x in folded) == 2


def test_nothing_to_fold_leaves_the_stack_as_it_was():
    stack = [cell_frame(), frame('<cell 1>', 'g'), frame('/p/raiser.py')]
    assert lines(tb.fold(stack, lambda f: tb.own(f.filename))) == \
        lines(traceback.StackSummary.from_list(stack))
    assert lines(tb.fold([], lambda f: True)) == []


def test_a_recursion_of_folded_frames_is_one_line():
    stack = [cell_frame()] + [frame('/p/deep.py', 'rec')] * 900 + [frame('/p/deep.py', 'rec')]
    folded = lines(tb.fold(stack, lambda f: tb.own(f.filename)))
    assert folded[2] == '    ... 900 frames in /p/deep.py ...' and len(folded) == 5


def _raise_through(depth, exc):
    # A library's frames, as they would be: compiled under a path of the
    # standard library's.
    src = 'def down(n, exc):\n    if n:\n        down(n - 1, exc)\n    raise exc\n'
    space = {}
    exec(compile(src, os.path.join(STDLIB, 'fake_library.py'), 'exec'), space)
    space['down'](depth, exc)


def test_texts_fold_each_part_of_a_chain_and_keep_the_whole():
    src = ('def cell():\n    try:\n        lib(3, KeyError("k"))\n'
           '    except KeyError as e:\n        lib(2, ValueError("v"))\n')
    space = {'lib': _raise_through}
    exec(compile(src, '<cell 9007>', 'exec'), space)
    try:
        space['cell']()
    except ValueError as e:
        exc = e
    folded, full = tb.texts(exc, exc.__traceback__, lambda f: f.filename == __file__,
                            lambda f: tb.own(f.filename))
    assert folded.count('    ... 3 frames in fake_library.py ...\n') == 1  # KeyError's part
    assert folded.count('    ... 2 frames in fake_library.py ...\n') == 1  # ValueError's
    assert 'During handling of the above exception' in folded
    assert folded.count('File "<cell 9007>"') == 2
    assert full.count('fake_library.py", line 3, in down') == 5
    assert __file__ not in full and __file__ not in folded
    assert folded.endswith('ValueError: v\n') and full.endswith('ValueError: v\n')
    assert len(folded.splitlines()) < len(full.splitlines())


def test_texts_without_frames_to_fold_are_one_text():
    try:
        exec(compile('1 / 0', '<cell 9002>', 'exec'), {})
    except ZeroDivisionError as e:
        folded, full = tb.texts(e, e.__traceback__, lambda f: f.filename == __file__,
                                lambda f: tb.own(f.filename))
    assert folded == full == ('Traceback (most recent call last):\n'
                              '  File "<cell 9002>", line 1, in <module>\n'
                              'ZeroDivisionError: division by zero\n')

