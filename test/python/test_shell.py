"""The IPython layer (lib/worker/shell.py, and runner.py's use of it):
cells as models write them for a Jupyter kernel, outside any worker."""
import re
import sys

import pytest

import _codeinterp as ci
from conftest import ipython, outputs as out, runner
from test_pip import fake_host, wheel_file
from test_runner import full_messages

_count = [100]


@pytest.fixture
def cell():
    """run(source) runs one cell with the next execution count and gives
    its fields with the outputs decoded, keeping the shell's namespace
    across the cells of one test only."""
    space = ipython.user_ns
    before = set(space)
    out.take()

    def run(source):
        _count[0] += 1
        fields = runner.run(_count[0], source.encode(), 1 << 20)
        fields['outputs'] = full_messages(fields.pop(ci.FIELD_OUTPUTS))
        fields['count'] = _count[0]
        return fields
    yield run
    for name in set(space) - before:
        del space[name]


def ok(fields):
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_OK, fields[ci.FIELD_TRACEBACK]
    return fields


def value(fields):
    v = ok(fields)[ci.FIELD_VALUE]
    return None if v is None else v.decode()


def refused(fields, words):
    assert fields[ci.FIELD_OUTCOME] == ci.OUTCOME_ERROR
    assert fields[ci.FIELD_ENAME] == b'PermissionError'
    assert words in fields[ci.FIELD_EVALUE].decode()
    tb = fields[ci.FIELD_TRACEBACK].decode()
    # the cell's own frame, then the error: no IPython frames between
    assert re.fullmatch(r'Traceback \(most recent call last\):\n  File "<cell \d+>", line \d+, '
                        r'in <module>\n    .*\n(    *\^+\n)?PermissionError: .*\n', tb), tb


def test_a_line_magic_first_does_not_stop_the_cell(cell, capsys):
    assert value(cell('%matplotlib inline\nimport math\nmath.floor(2.5)')) == '2'


def test_magics_print_as_ipython_does(cell, capfd):
    ok(cell('%time sum(range(10))'))
    assert re.match(r'CPU times: user .+, sys: .+, total: .+\nWall time: .+\n', capfd.readouterr().out)
    ok(cell('%timeit -n 10 -r 2 sum(range(10))'))
    # On a busy machine IPython first warns that the runs differed.
    assert re.fullmatch(r'(The slowest run took [\d.]+ times longer than the fastest\. This could '
                        r'mean that an intermediate result is being cached\.\n)?'
                        r'\d+(\.\d+)? (ns|µs|ms) ± \d+(\.\d+)? (ns|µs|ms) per loop '
                        r'\(mean ± std\. dev\. of 2 runs, 10 loops each\)\n', capfd.readouterr().out)
    ok(cell('%who'))
    assert capfd.readouterr().out == 'Interactive namespace is empty.\n'
    ok(cell('apples = 3\n%who'))
    assert capfd.readouterr().out == 'apples\t \n'
    assert value(cell('%who_ls')) == "['apples']"


def test_an_unknown_magic_is_ipythons_usage_error(cell):
    f = cell('%nosuchmagic 1')
    assert f[ci.FIELD_ENAME] == b'UsageError'
    assert f[ci.FIELD_EVALUE] == b'Line magic function `%nosuchmagic` not found.'
    assert f[ci.FIELD_TRACEBACK] == b'UsageError: Line magic function `%nosuchmagic` not found.\n'


@pytest.mark.parametrize('source', ['!ls', 'files = !ls', '%%bash\nls\n', '%%sh\nls\n',
                                    '%system ls', '%sx ls', "get_ipython().system('ls')",
                                    "get_ipython().getoutput('ls')", '%%script bash\nls\n'])
def test_shell_commands_are_refused_naming_the_policy(cell, source):
    refused(cell(source), 'shell commands are disabled in this sandbox (no new processes)')


@pytest.mark.parametrize('source', ['%conda install seaborn', '%mamba install seaborn',
                                    '%micromamba install seaborn'])
def test_conda_is_refused_listing_what_is_installed(cell, source):
    f = cell(source)
    refused(f, 'installing packages is disabled in this sandbox')
    assert re.search(r'\bnumpy \d', f[ci.FIELD_EVALUE].decode())


@pytest.mark.parametrize('source', ['!pip install ci-absent', '%pip install ci-absent',
                                    '!python3 -m pip install ci-absent',
                                    'import pip\npip.main(["install", "ci-absent"])'])
def test_pip_without_a_wheelhouse_says_so_listing_what_is_installed(cell, source, capfd,
                                                                     monkeypatch):
    monkeypatch.delitem(sys.modules, 'pip', raising=False)
    f = ok(cell(source))
    err = capfd.readouterr().err
    assert err.startswith('ERROR: package installation is not enabled in this session (no'
                          ' wheelhouse); these are installed: ')
    assert re.search(r'\bnumpy \d', err)
    assert f[ci.FIELD_VALUE] == (b'1' if 'main' in source else None)


@pytest.fixture
def wheelhouse(tmp_path, monkeypatch):
    """A fake host's wheelhouse (test_pip.FakeHost) for the cells."""
    before = set(sys.modules)
    monkeypatch.delitem(sys.modules, 'pip', raising=False)
    yield fake_host(tmp_path, monkeypatch)
    for name in set(sys.modules) - before:
        if name.startswith('ci_'):
            del sys.modules[name]


def test_pip_installs_and_the_next_line_imports(cell, wheelhouse, capfd):
    assert value(cell('%pip install ci_alpha\nimport ci_alpha, ci_beta\n'
                      'ci_alpha.VERSION, ci_beta.VERSION')) == "('1.0', '2.0')"
    assert capfd.readouterr().out.endswith('Successfully installed ci-beta-2.0 ci-alpha-1.0\n')
    assert value(cell('name = "ci-pre"\n!pip install -q {name}\nimport ci_pre\n'
                      '_exit_code, ci_pre.VERSION')) == "(0, '1.0')"
    assert value(cell('import pip\npip.main(["install", "ci-onlypre"])')) == '0'
    assert value(cell('frozen = !pip freeze\n[x for x in frozen if x.startswith("ci-")]')) == (
        "['ci-alpha==1.0', 'ci-beta==2.0', 'ci-onlypre==1.0rc1', 'ci-pre==1.0']")
    assert wheelhouse.installed == [wheel_file('ci-beta', '2.0'), wheel_file('ci-alpha', '1.0'),
                                    wheel_file('ci-pre', '1.0'), wheel_file('ci-onlypre', '1.0rc1')]


def test_pip_errors_are_printed_and_the_cell_goes_on(cell, wheelhouse, capfd):
    assert value(cell('%pip install nonexistent\n1 + 1')) == '2'
    assert 'ERROR: No matching distribution found for nonexistent\n' in capfd.readouterr().err
    assert value(cell('!pip install nonexistent\n_exit_code')) == '1'
    assert wheelhouse.installed == []


def test_pip_in_a_shell_pipeline_is_refused(cell, wheelhouse):
    refused(cell('!pip install ci-beta | tee log'), 'pip runs here without a shell')
    refused(cell('!pip3 list; ls'), 'shell commands are disabled in this sandbox')
    assert wheelhouse.installed == []


def test_history_is_kept_as_ipython_keeps_it(cell):
    first = cell('6 * 7')
    n = first['count']
    cell('"two"')
    cell('3.5')
    assert value(cell('_, __, ___')) == "(3.5, 'two', 42)"
    assert value(cell(f'_{n}, Out[{n}], In[{n}], _i{n}')) == "(42, 42, '6 * 7', '6 * 7')"
    assert value(cell('_i')) == f"'_{n}, Out[{n}], In[{n}], _i{n}'"


def test_ipython_syntax_is_transformed(cell, capfd):
    assert value(cell('>>> y = 2\n>>> y * 3')) == '6'
    assert value(cell('In [1]: z = 4\nIn [2]: z + 1')) == '5'
    ok(cell('len?'))
    assert 'Return the number of items in a container.' in capfd.readouterr().out


def test_top_level_await_keeps_tasks_across_cells(cell):
    ok(cell('import asyncio\nasync def later():\n    await asyncio.sleep(0.01)\n    return 7\n'
            'task = asyncio.ensure_future(later())\nawait asyncio.sleep(0)'))
    assert value(cell('await task')) == '7'
    assert value(cell('await asyncio.sleep(0, result="done")')) == "'done'"


def test_display_is_ipythons_whichever_the_cell_imported(cell):
    f = ok(cell('from IPython.display import display, HTML\ndisplay(HTML("<b>x</b>"))'))
    assert [(k, m, d) for k, n, fl, i, m, d in f['outputs']] == [
        (ci.OUTPUT_DISPLAY_DATA, 'text/html', b'<b>x</b>'),
        (ci.OUTPUT_DISPLAY_DATA, 'text/plain', b'<IPython.core.display.HTML object>')]


def test_a_display_handle_updates_its_display(cell):
    f = ok(cell("h = display('a', display_id=True)\nh.update('b')\n"
                "display('c', display_id='mine')\nfrom IPython.display import update_display\n"
                "update_display('d', display_id='mine')"))
    got = f['outputs']
    assert [(k, n, m, d) for k, n, fl, i, m, d in got] == [
        (ci.OUTPUT_DISPLAY_DATA, 0, 'text/plain', b"'a'"),
        (ci.OUTPUT_UPDATE_DISPLAY_DATA, 1, 'text/plain', b"'b'"),
        (ci.OUTPUT_DISPLAY_DATA, 2, 'text/plain', b"'c'"),
        (ci.OUTPUT_UPDATE_DISPLAY_DATA, 3, 'text/plain', b"'d'")]
    ids = [i for k, n, fl, i, m, d in got]
    assert ids[0] == ids[1] and re.fullmatch(r'[0-9a-f]{32}', ids[0])
    assert ids[2:] == ['mine', 'mine']


def test_clear_output_is_a_message_with_its_wait_flag(cell):
    f = ok(cell('from IPython.display import clear_output\nprint("x")\nclear_output()\n'
                'clear_output(wait=True)\ndisplay(1)'))
    assert [(k, n, fl, m) for k, n, fl, i, m, d in f['outputs']] == [
        (ci.OUTPUT_CLEAR_OUTPUT, 0, 0, ''),
        (ci.OUTPUT_CLEAR_OUTPUT, 1, ci.OUTPUT_FLAG_WAIT, ''),
        (ci.OUTPUT_DISPLAY_DATA, 2, 0, 'text/plain')]


def test_ipython_display_and_rich_reprs(cell):
    f = ok(cell('class Shows:\n    def _ipython_display_(self):\n        display({"a": 1}, raw=True)\n'
                'Shows()'))
    assert f[ci.FIELD_VALUE] is None
    # raw=True: the dict is the bundle, one output of an unknown MIME type is dropped
    f = ok(cell('from IPython.display import Javascript, Markdown, Latex\n'
                'display(Javascript("1"), Markdown("*m*"), Latex("$x$"))'))
    assert [m for k, n, fl, i, m, d in f['outputs'] if m != 'text/plain'] == [
        'application/javascript', 'text/markdown', 'text/latex']
    assert f['outputs'][0][5] == b'1'  # text, not base64
    f = ok(cell('class P:\n    def _repr_pdf_(self): return b"%PDF-1"\nP()'))
    assert [(k, m, d) for k, n, fl, i, m, d in f['outputs']] == [
        (ci.OUTPUT_EXECUTE_RESULT, 'application/pdf', b'%PDF-1')]


def test_a_repr_that_raises_is_reported_as_ipython_does(cell, capfd):
    f = ok(cell('class Bad:\n    def __repr__(self): raise ValueError("no")\nBad()'))
    assert f[ci.FIELD_VALUE] is None
    err = capfd.readouterr().err
    assert 'ValueError: no' in err and 'runner.py' not in err


def test_values_are_pretty_printed_as_in_a_kernel(cell):
    assert value(cell('list(range(30))')) == (
        '[0,\n 1,\n 2,\n 3,\n 4,\n 5,\n 6,\n 7,\n 8,\n 9,\n 10,\n 11,\n 12,\n 13,\n 14,\n'
        ' 15,\n 16,\n 17,\n 18,\n 19,\n 20,\n 21,\n 22,\n 23,\n 24,\n 25,\n 26,\n 27,\n 28,\n 29]')
    ok(cell('%precision 2'))
    assert value(cell('3.14159')) == '3.14'
    ok(cell('%precision'))
    assert value(cell('3.14159')) == '3.14159'


def test_sympy_init_printing_takes_effect(cell):
    f = ok(cell('import sympy\nsympy.init_printing()\nx = sympy.Symbol("x")\nx**2'))
    assert f[ci.FIELD_VALUE] == b' 2\nx '  # sympy's pretty text, as a kernel shows it
    latex = [d for k, n, fl, i, m, d in f['outputs'] if m == 'text/latex']
    assert latex == [b'$\\displaystyle x^{2}$']
    ok(cell('sympy.init_printing(pretty_print=False)'))


def test_pandas_has_a_kernels_display_options(cell):
    assert value(cell('import pandas as pd\n'
                      'pd.get_option("display.max_columns"), pd.get_option("display.width")')) == '(20, 80)'
    text = value(cell('pd.DataFrame([[i] * 30 for i in range(3)])'))
    assert '...' in text and ' 29' in text and ' 15' not in text.split('\n')[0]


def test_a_warning_is_shown_each_time(cell, capfd):
    for _ in range(2):
        ok(cell('import warnings\nwarnings.warn("careful")'))
        assert 'UserWarning: careful' in capfd.readouterr().err


def test_xmode_minimal_leaves_the_exception_line(cell, capfd):
    ok(cell('%xmode Minimal'))
    assert capfd.readouterr().out == 'Exception reporting mode: Minimal\n'
    assert cell('1/0')[ci.FIELD_TRACEBACK] == b'ZeroDivisionError: division by zero\n'
    ok(cell('%xmode Context'))


def test_cell_magics_that_display(cell):
    f = ok(cell('%%html\n<i>h</i>\n'))
    assert [(k, m, d) for k, n, fl, i, m, d in f['outputs']][0] == (
        ci.OUTPUT_DISPLAY_DATA, 'text/html', b'<i>h</i>\n')
    f = ok(cell('%%capture captured\nprint("hidden")\ndisplay("shown later")'))
    assert f['outputs'] == []
    assert value(cell('captured.stdout')) == "'hidden\\n'"


def test_cd_stays_in_the_workspace(cell, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'sub').mkdir()
    ipython.workspace = str(tmp_path)
    try:
        ok(cell('%cd sub'))
        refused(cell('%cd /etc'), 'inside the session workspace')
        ok(cell('%cd'))
        assert value(cell('%pwd')) == repr(str(tmp_path))
    finally:
        ipython.workspace = None


def test_figure_formats_follow_the_inline_backend_config(cell):
    out.configure(1 << 22, 1 << 24)
    try:
        ok(cell("%config InlineBackend.figure_format = 'svg'"))
        f = ok(cell('import matplotlib.pyplot as plt\nplt.plot([1, 2]);'))
        assert [m for k, n, fl, i, m, d in f['outputs']] == ['image/svg+xml', 'text/plain']
        ok(cell("%config InlineBackend.figure_formats = ['png']"))
        f = ok(cell('plt.plot([1, 2]);'))
        assert [m for k, n, fl, i, m, d in f['outputs']] == ['image/png', 'text/plain']
    finally:
        out.configure(1 << 20, 1 << 22)


def test_ioff_keeps_figures_for_show_as_the_inline_backend(cell):
    import matplotlib.pyplot as plt
    out.configure(1 << 22, 1 << 24)
    try:
        f = ok(cell('import matplotlib.pyplot as plt\nplt.ioff()\nplt.plot([1, 2]);'))
        assert f['outputs'] == [] and plt.get_fignums() == [1]
        f = ok(cell('plt.show()'))
        assert [m for k, n, fl, i, m, d in f['outputs']] == ['image/png', 'text/plain']
        assert plt.get_fignums() == []
    finally:
        ok(cell('plt.ion()'))
        out.configure(1 << 20, 1 << 22)


def test_an_empty_figure_is_its_text_alone(cell):
    f = ok(cell('import matplotlib.pyplot as plt\nplt.figure()\nplt.close()\nplt.figure();'))
    assert [(m, d) for k, n, fl, i, m, d in f['outputs']] == [
        ('text/plain', b'<Figure size 640x480 with 0 Axes>')]


def test_events_fire_around_each_cell(cell):
    ok(cell('seen = []\n'
            'get_ipython().events.register("pre_run_cell", lambda info: seen.append(info.raw_cell))\n'
            'get_ipython().events.register("post_run_cell", '
            'lambda r: seen.append(type(r.error_in_exec).__name__))'))
    cell('1 / 0')
    assert value(cell('seen')) == "['1 / 0', 'ZeroDivisionError', 'seen']"
    ok(cell('get_ipython().events.callbacks["pre_run_cell"].clear()\n'
            'get_ipython().events.callbacks["post_run_cell"].clear()'))


def test_reset_empties_the_namespace_and_keeps_the_shell(cell, capfd):
    ok(cell('gone = 1\n%reset -f'))
    f = cell('gone')
    assert f[ci.FIELD_ENAME] == b'NameError'
    assert value(cell('get_ipython() is not None, callable(display)')) == '(True, True)'
    ok(cell('%who'))
    assert capfd.readouterr().out == 'Interactive namespace is empty.\n'


def test_extensions_load_and_run_runs_a_file(cell, tmp_path, monkeypatch, capfd):
    ok(cell('%load_ext autoreload\n%autoreload 2'))
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'script.py').write_text('answer = 6 * 7\nprint("ran")\n')
    ok(cell('%run script.py'))
    assert capfd.readouterr().out == 'ran\n'
    assert value(cell('answer')) == '42'
    ok(cell('%unload_ext autoreload'))


def test_more_display_objects(cell):
    png = (b'\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06'
           b'\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00'
           b'\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82')
    f = ok(cell(f'from IPython.display import Image, SVG, JSON\ndisplay(Image(data={png!r}))\n'
                'display(SVG("<svg xmlns=\'http://www.w3.org/2000/svg\'/>"))\n'
                'JSON({"a": [1, 2]})'))
    got = [(k, m) for k, n, fl, i, m, d in f['outputs'] if m != 'text/plain']
    assert got == [(ci.OUTPUT_DISPLAY_DATA, 'image/png'), (ci.OUTPUT_DISPLAY_DATA, 'image/svg+xml'),
                   (ci.OUTPUT_EXECUTE_RESULT, 'application/json')]
    assert f['outputs'][0][5] == png
    assert [d for k, n, fl, i, m, d in f['outputs'] if m == 'application/json'] == [b'{"a": [1, 2]}']


def test_a_bare_magic_name_is_automagic(cell, capfd):
    ok(cell('who'))
    assert capfd.readouterr().out == 'Interactive namespace is empty.\n'
    assert value(cell('who = 3\nwho')) == '3'  # a variable wins, as in IPython
    refused(cell('ls'), 'shell commands are disabled')


def test_an_empty_figure_as_the_value_is_shown_again_as_in_the_inline_backend(cell):
    f = ok(cell('import matplotlib.pyplot as plt\nplt.figure()'))
    assert f[ci.FIELD_VALUE] == b'<Figure size 640x480 with 0 Axes>'
    assert [(k, m, d) for k, n, fl, i, m, d in f['outputs']] == [
        (ci.OUTPUT_DISPLAY_DATA, 'text/plain', b'<Figure size 640x480 with 0 Axes>')]
    out.configure(1 << 22, 1 << 24)
    try:
        f = ok(cell('fig = plt.figure()\nplt.plot([1])\nfig'))
        assert [(k, m) for k, n, fl, i, m, d in f['outputs']] == [
            (ci.OUTPUT_EXECUTE_RESULT, 'image/png')]  # once, not again at the end
    finally:
        out.configure(1 << 20, 1 << 22)


VALUES = ['1', '"a\\nb"', 'True', '2.5', '__import__("numpy").int64(3)', '__import__("numpy").float64(1.5)',
          'list(range(40))', '{"k": (1, None)}', '(1,)', '__import__("decimal").Decimal("1.5")',
          '__import__("datetime").date(2026, 12, 1)', 'range(3)', 'b"x"', '{3, 1, 2}', 'frozenset({1})',
          '__import__("numpy").dtype("int32")', 'Ellipsis', '10 ** 5000', 'type', 'len',
          '__import__("numpy").arange(3)', '__import__("pandas").Series([1, 2])']


@pytest.mark.parametrize('source', VALUES)
def test_the_short_way_to_a_value_gives_what_ipython_gives(cell, source):
    # A value the runner formats without the DisplayFormatter must have
    # exactly the DisplayFormatter's text/plain and no other form.
    for setup in ('pass', '%precision 2', 'import sympy\nsympy.init_printing()'):
        ok(cell(setup))
        v = eval(source)
        text = runner._text_only(v)
        data, _ = ipython.display_formatter.format(v)
        if text is not None:
            assert data == {'text/plain': text}, (setup, source)
        ok(cell('%precision'))
        ok(cell('import sympy\nsympy.init_printing(pretty_print=False, use_latex=False)'))


def test_the_short_way_is_taken_for_builtins_and_numpy_scalars():
    import numpy as np
    import pandas as pd
    for v in (1, 'a', True, 2.5, np.int64(3), np.arange(3), [1, 2], {'a': 1}):
        assert runner._text_only(v) is not None, v
    for v in (pd.DataFrame({'a': [1]}), ipython):
        assert runner._text_only(v) is None


@pytest.mark.parametrize('magic, mime', [('markdown', 'text/markdown'), ('latex', 'text/latex'),
                                         ('js', 'application/javascript'),
                                         ('javascript', 'application/javascript'),
                                         ('svg', 'image/svg+xml')])
def test_display_cell_magics(cell, magic, mime):
    body = '<svg xmlns="http://www.w3.org/2000/svg"/>' if magic == 'svg' else 'x = 1'
    f = ok(cell(f'%%{magic}\n{body}\n'))
    assert [(k, m) for k, n, fl, i, m, d in f['outputs']][0] == (ci.OUTPUT_DISPLAY_DATA, mime)


def test_more_magics_print_as_ipython(cell, capfd, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ok(cell('%%writefile notes.txt\nhello\n'))
    assert capfd.readouterr().out == 'Writing notes.txt\n'
    assert (tmp_path / 'notes.txt').read_text() == 'hello\n'
    ok(cell('n = 3\n%whos'))
    assert re.search(r'Variable +Type +Data/Info\n-+\nn +int +3\n', capfd.readouterr().out)
    ok(cell('%env CI_TEST_VAR=7'))
    assert capfd.readouterr().out == 'env: CI_TEST_VAR=7\n'
    assert value(cell('%env CI_TEST_VAR')) == "'7'"
    ok(cell('%history'))
    assert capfd.readouterr().out.endswith('\n%env CI_TEST_VAR=7\n%env CI_TEST_VAR\n%history\n')
    listed = value(cell('%lsmagic'))
    assert listed.startswith('Available line magics:\n') and '  %timeit  ' in listed
    ok(cell('%magic'))
    assert "IPython's 'magic' functions" in capfd.readouterr().out


def test_an_error_a_magic_shows_is_the_cells(cell, tmp_path, monkeypatch, capfd):
    f = cell('%time 1 / 0')
    assert f[ci.FIELD_OUTCOME] == ci.OUTCOME_ERROR and f[ci.FIELD_ENAME] == b'ZeroDivisionError'
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'bad.py').write_text('raise ValueError("in the script")\n')
    f = cell('%run bad.py')
    assert f[ci.FIELD_ENAME] == b'ValueError' and f[ci.FIELD_EVALUE] == b'in the script'
    capfd.readouterr()
    ok(cell('class Bad:\n    def __repr__(self): raise ValueError("no")\ndisplay(Bad())'))


def test_xdel_load_and_store_as_in_a_kernel(cell, tmp_path, monkeypatch, capfd):
    ok(cell('gone = [1]\ngone'))
    ok(cell('%xdel gone'))
    assert cell('gone')[ci.FIELD_ENAME] == b'NameError'
    monkeypatch.chdir(tmp_path)
    (tmp_path / 's.py').write_text('print("loaded")\n')
    capfd.readouterr()
    ok(cell('%load s.py'))
    assert capfd.readouterr().out == '# %load s.py\nprint("loaded")\n'
    ipython.use_home(str(tmp_path), None)  # the store under this test's HOME
    ok(cell('kept = 5\n%store kept'))
    assert "Stored 'kept' (int)" in capfd.readouterr().out
    assert (tmp_path / '.ipython' / 'profile_default' / 'db' / 'autorestore' / 'kept').is_file()
