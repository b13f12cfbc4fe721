"""pip's command line from the session's wheelhouse (lib/worker/pip.py),
outside any worker: a fake host_install lists wheels and "installs" one
by writing its metadata and a module into a site directory."""
import importlib
import json
import os
import re
import sys

import pytest

import _codeinterp as ci
from conftest import _load

pip = sys.modules.get('_codeinterp_pip') or _load('_codeinterp_pip', 'lib', 'worker', 'pip.py')
from packaging.markers import Marker as PMarker  # noqa: E402 (after the worker's modules)
from packaging.specifiers import Specifier as PSpecifier  # noqa: E402
from packaging.version import Version as PVersion  # noqa: E402

# (name, version, requires) of the fake wheelhouse.
WHEELS = [('ci-beta', '1.0', []), ('ci-beta', '2.0', []),
          ('ci-alpha', '1.0', ['ci-beta >=2.0']),
          ('ci-gamma', '1.0', ['ci-alpha', 'numpy >=1.0']),
          ('ci-needs-new-numpy', '1.0', ['numpy >=99']),
          ('ci-pre', '1.0', []), ('ci-pre', '2.0b1', []),
          ('ci-onlypre', '1.0rc1', [])]


def wheel_file(name, version):
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


class FakeHost:
    """host_install(op, arg) of a host with a wheelhouse: 'list' gives the
    listing, 'wheel' writes the wheel's dist-info and module into site
    (or answers what answers[file] says); calls records each request."""

    def __init__(self, site, wheels=WHEELS):
        self.site = str(site)
        os.makedirs(self.site, exist_ok=True)
        self.wheels = [{'file': wheel_file(n, v), 'name': n, 'version': v, 'requires': r}
                       for n, v, r in wheels]
        self.calls, self.answers = [], {}

    def __call__(self, op, arg):
        self.calls.append((op, arg))
        if op == 'list':
            return 'done', json.dumps({'site': self.site, 'wheels': self.wheels})
        if arg in self.answers:
            return self.answers[arg]
        w = next(w for w in self.wheels if w['file'] == arg)
        module = w['name'].replace('-', '_')
        os.makedirs(os.path.join(self.site, module))
        with open(os.path.join(self.site, module, '__init__.py'), 'w') as f:
            f.write(f"VERSION = {w['version']!r}\n")
        write_dist(self.site, w['name'], w['version'], w['requires'])
        return 'done', json.dumps({'installed': w['name'], 'version': w['version'],
                                   'files': 2, 'bytes': 20})

    @property
    def installed(self):
        return [arg for op, arg in self.calls if op == 'wheel']


def write_dist(where, name, version, requires=(), summary=''):
    info = os.path.join(where, f"{name.replace('-', '_')}-{version}.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, 'METADATA'), 'w') as f:
        f.write(f'Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n')
        f.write(f'Summary: {summary}\n' if summary else '')
        f.write(''.join(f'Requires-Dist: {r}\n' for r in requires))


def fake_host(tmp_path, monkeypatch, wheels=WHEELS):
    """A FakeHost for the test, its site under tmp_path; sys.path and the
    working directory (tmp_path) put back after it."""
    monkeypatch.setattr(sys, 'path', list(sys.path))
    monkeypatch.chdir(tmp_path)
    host = FakeHost(tmp_path / 'site', wheels)
    monkeypatch.setattr(ci, 'host_install', host, raising=False)
    return host


@pytest.fixture(params=['packaging', 'fallback'])
def backend(request, monkeypatch):
    """Each test twice: versions through packaging, and through pip.py's own."""
    monkeypatch.setattr(pip, '_backend', [pip._Packaging() if request.param == 'packaging'
                                          else pip._Fallback])
    return request.param


@pytest.fixture
def host(tmp_path, monkeypatch, backend):
    before = set(sys.modules)
    yield fake_host(tmp_path, monkeypatch)
    for name in set(sys.modules) - before:
        if name.startswith('ci_'):
            del sys.modules[name]


@pytest.fixture
def run(capsys):
    """run(*args): pip's status, stdout and stderr for pip args."""
    def run(*args):
        capsys.readouterr()
        status = pip.run(list(args))
        out, err = capsys.readouterr()
        return status, out, err
    return run


def location(name):
    return pip.installed()[name].location


# ---------------------------------------------------------- install
def test_install_resolves_dependencies_and_installs_them_first(host, run):
    assert run('install', 'ci_alpha') == (0, (
        "Looking in the session's wheelhouse\n"
        "Collecting ci_alpha\n"
        "Collecting ci-beta>=2.0 (from ci-alpha==1.0)\n"
        "Installing collected packages: ci-beta, ci-alpha\n"
        "Successfully installed ci-beta-2.0 ci-alpha-1.0\n"), '')
    assert host.installed == [wheel_file('ci-beta', '2.0'), wheel_file('ci-alpha', '1.0')]
    assert importlib.import_module('ci_alpha').VERSION == '1.0'
    assert importlib.import_module('ci_beta').VERSION == '2.0'


def test_a_pin_chooses_its_version(host, run):
    status, out, err = run('install', 'ci-beta==1.0')
    assert (status, err) == (0, '')
    assert out.endswith('Successfully installed ci-beta-1.0\n')
    assert host.installed == [wheel_file('ci-beta', '1.0')]


def test_the_highest_matching_version_and_pre_releases(host, run):
    # A final release, unless asked for (--pre, a specifier naming a
    # pre-release) or there is only a pre-release.
    assert run('install', '--dry-run', 'ci-pre')[1].endswith('Would install ci-pre-1.0\n')
    assert run('install', '--dry-run', '--pre', 'ci-pre')[1].endswith(
        'Would install ci-pre-2.0b1\n')
    assert run('install', '--dry-run', 'ci-pre>=2.0b1')[1].endswith(
        'Would install ci-pre-2.0b1\n')
    assert run('install', '--dry-run', 'ci-onlypre')[1].endswith(
        'Would install ci-onlypre-1.0rc1\n')
    assert run('install', '--dry-run', 'ci-beta<2', 'ci-beta!=1.5')[1].endswith(
        'Would install ci-beta-1.0\n')
    assert host.installed == []


def test_a_name_the_wheelhouse_lacks_gets_pips_words_and_what_it_offers(host, run):
    offers = ("The session's wheelhouse offers: ci-alpha 1.0; ci-beta 1.0, 2.0; ci-gamma 1.0;"
              " ci-needs-new-numpy 1.0; ci-onlypre 1.0rc1; ci-pre 1.0, 2.0b1\n")
    assert run('install', 'nonexistent') == (1, '', (
        'ERROR: Could not find a version that satisfies the requirement nonexistent'
        ' (from versions: none)\n'
        'ERROR: No matching distribution found for nonexistent\n' + offers))
    assert run('install', 'ci_beta==3.0') == (1, '', (
        'ERROR: Could not find a version that satisfies the requirement ci_beta==3.0'
        ' (from versions: 1.0, 2.0)\n'
        'ERROR: No matching distribution found for ci_beta==3.0\n' + offers))
    assert 'Did you mean ci-beta?\n' in run('install', 'ci-bet')[2]
    assert host.installed == []


def test_a_missing_dependency_names_what_needs_it(tmp_path, monkeypatch, run, backend):
    host = fake_host(tmp_path, monkeypatch, [('ci-top', '1.0', ['ci-absent >=1'])])
    status, out, err = run('install', 'ci-top')
    assert status == 1 and host.installed == []
    assert err.startswith('ERROR: Could not find a version that satisfies the requirement'
                          ' ci-absent>=1 (from ci-top==1.0) (from versions: none)\n'
                          'ERROR: No matching distribution found for ci-absent>=1\n')


def test_two_versions_needed_is_a_conflict(host, run):
    for args in (('ci_beta==1.0', 'ci_alpha'), ('ci_alpha', 'ci_beta==1.0')):
        names = ' and '.join(args)
        assert run('install', *args) == (1, '', (
            f'ERROR: Cannot install {names} because these package versions have conflicting'
            ' dependencies.\n'
            'The conflict is caused by:\n'
            '    The user requested ci_beta==1.0\n'
            '    ci-alpha 1.0 depends on ci-beta>=2.0\n'
            'The wheelhouse has ci-beta 1.0, 2.0.\n'
            'ERROR: ResolutionImpossible: no version of ci-beta meets all of them\n'))
    assert host.installed == []


def test_a_later_requirement_changes_an_earlier_choice(tmp_path, monkeypatch, run, backend):
    # ci-beta is chosen as 2.0 first; ci-low then needs <2: one pass more.
    host = fake_host(tmp_path, monkeypatch, WHEELS + [('ci-low', '1.0', ['ci-beta <2'])])
    status, out, err = run('install', 'ci-beta', 'ci-low')
    assert (status, err) == (0, '')
    assert host.installed == [wheel_file('ci-beta', '1.0'), wheel_file('ci-low', '1.0')]


def test_what_is_installed_is_not_installed_again(host, run):
    numpy = pip.installed()['numpy']
    assert run('install', 'ci-gamma') == (0, (
        "Looking in the session's wheelhouse\n"
        "Collecting ci-gamma\n"
        "Collecting ci-alpha (from ci-gamma==1.0)\n"
        f"Requirement already satisfied: numpy>=1.0 in {numpy.location} (from ci-gamma==1.0)"
        f" ({numpy.version})\n"
        "Collecting ci-beta>=2.0 (from ci-alpha==1.0)\n"
        "Installing collected packages: ci-beta, ci-alpha, ci-gamma\n"
        "Successfully installed ci-beta-2.0 ci-alpha-1.0 ci-gamma-1.0\n"), '')
    host.calls.clear()
    assert run('install', 'ci-alpha', 'NumPy') == (0, (
        f'Requirement already satisfied: ci-alpha in {host.site} (1.0)\n'
        f'Requirement already satisfied: NumPy in {numpy.location} ({numpy.version})\n'), '')
    assert host.installed == []


def test_an_installed_version_that_does_not_fit_cannot_be_replaced(host, run):
    numpy = pip.installed()['numpy']
    assert run('install', 'ci-needs-new-numpy') == (1, '', (
        f'ERROR: Cannot install numpy>=99 (from ci-needs-new-numpy==1.0): numpy {numpy.version}'
        f' is installed (in {numpy.location}), and this session cannot uninstall or replace'
        ' an installed package\n'))
    run('install', 'ci-beta==1.0')
    assert run('install', 'ci-beta==2.0')[2].startswith(
        f'ERROR: Cannot install ci-beta==2.0: ci-beta 1.0 is installed (in {host.site})')
    assert host.installed == [wheel_file('ci-beta', '1.0')]


def test_no_deps_installs_the_requirement_alone(host, run):
    assert run('install', '--no-deps', 'ci_alpha')[0] == 0
    assert host.installed == [wheel_file('ci-alpha', '1.0')]


def test_a_requirements_file(host, run, tmp_path):
    (tmp_path / 'req.txt').write_text(
        '# what the project needs\n'
        'ci-beta==2.0   # pinned\n'
        '-r more.txt\n'
        'ci-pre; python_version < "3"\n'
        'ci-onlypre --hash=sha256:00\n')
    (tmp_path / 'more.txt').write_text('ci_alpha \\\n  ==1.0\n')
    (tmp_path / 'cons.txt').write_text('ci-onlypre<2\n')
    status, out, err = run('install', '-r', 'req.txt', '-c', 'cons.txt')
    assert status == 0
    assert out.startswith('Ignoring ci-pre: markers \'python_version < "3"\' don\'t match your'
                          " environment\nLooking in the session's wheelhouse\n")
    assert out.endswith('Successfully installed ci-beta-2.0 ci-alpha-1.0 ci-onlypre-1.0rc1\n')
    assert err == ("WARNING: --hash is not checked here: the host checks each wheel against the"
                   " SHA-256 that the session's signed package manifest lists\n")
    assert host.installed == [wheel_file('ci-beta', '2.0'), wheel_file('ci-alpha', '1.0'),
                              wheel_file('ci-onlypre', '1.0rc1')]
    (tmp_path / 'bad.txt').write_text('ci-beta\n--no-such\n')
    assert run('install', '-r', 'bad.txt') == (1, '', (
        'ERROR: no such option: --no-such (from line 2 of bad.txt)\n'))
    assert run('install', '-r', 'none.txt') == (1, '', (
        "ERROR: Could not open requirements file: [Errno 2] No such file or directory:"
        " 'none.txt'\n"))


def test_a_constraint_limits_the_choice(host, run, tmp_path):
    (tmp_path / 'c.txt').write_text('ci-beta<2\n')
    assert run('install', '-c', 'c.txt', 'ci-beta')[0] == 0
    assert host.installed == [wheel_file('ci-beta', '1.0')]


def test_options_pip_takes(host, run):
    assert run('install', '-qU', 'ci-beta==1.0') == (0, '', '')
    assert run('-q', 'install', '--upgrade', '--user', 'ci-pre') == (0, '', '')
    status, out, err = run('install', '--index-url', 'https://example.org/simple', 'ci-onlypre')
    assert status == 0
    assert err == ('WARNING: --index-url ignored: this session installs packages only from its'
                   ' wheelhouse, into its site directory\n')
    assert host.installed == [wheel_file('ci-beta', '1.0'), wheel_file('ci-pre', '1.0'),
                              wheel_file('ci-onlypre', '1.0rc1')]
    assert run('install', '--target', '/tmp/x', 'ci-alpha') == (1, '', (
        'ERROR: --target is not available here: this session installs packages only from its'
        ' wheelhouse, into its site directory\n'))
    status, out, err = run('install', '--bogus', 'ci-alpha')
    assert (status, out) == (2, '') and err.endswith('\n\nno such option: --bogus\n')
    assert run('install', '-r')[2].endswith('-r option requires 1 argument\n')
    assert run('install') == (1, '', 'ERROR: You must give at least one requirement to install'
                                     ' (see "pip help install")\n')


def test_what_is_not_a_name_is_refused(host, run):
    assert run('install', 'ci-beta=1.0') == (1, '', (
        "ERROR: Invalid requirement: 'ci-beta=1.0' (= is not a valid operator. Did you mean"
        " == ?)\n"))
    assert run('install', './ci_beta-1.0-py3-none-any.whl') == (1, '', (
        'ERROR: cannot install ./ci_beta-1.0-py3-none-any.whl: this session installs packages'
        ' only from its wheelhouse, into its site directory, by name, not from a file or a URL'
        ' (the wheelhouse lists it: %pip install ci-beta==1.0)\n'))
    assert 'not from a file or a URL' in run('install', 'ci-beta @ https://example.org/x.whl')[2]
    status, out, err = run('install', 'ci-beta[fast]==1.0')
    assert status == 0 and err == ('WARNING: the extras of ci-beta[fast]==1.0 are not installed:'
                                   ' the wheelhouse lists only the dependencies that need no'
                                   ' extra\n')
    assert host.installed == [wheel_file('ci-beta', '1.0')]


def test_the_hosts_refusal_is_shown_and_what_came_before_kept(host, run):
    alpha = wheel_file('ci-alpha', '1.0')
    host.answers[alpha] = ('refused', f'{alpha} would shadow the module \'numpy\'')
    assert run('install', 'ci-alpha') == (1, (
        "Looking in the session's wheelhouse\n"
        "Collecting ci-alpha\n"
        "Collecting ci-beta>=2.0 (from ci-alpha==1.0)\n"
        "Installing collected packages: ci-beta, ci-alpha\n"), (
        f"ERROR: Could not install ci-alpha 1.0 ({alpha}): the host refused it: {alpha} would"
        " shadow the module 'numpy'\n"
        'Installed before it: ci-beta-2.0\n'))
    assert host.site in sys.path
    assert importlib.import_module('ci_beta').VERSION == '2.0'
    host.answers[alpha] = ('failed', "the session's disk quota is full")
    assert run('install', 'ci-alpha')[2] == (
        f"ERROR: Could not install ci-alpha 1.0 ({alpha}): the host could not install it:"
        " the session's disk quota is full\n")


def test_an_interrupt_while_the_host_installs_is_the_cells(host, run):
    host.answers[wheel_file('ci-beta', '2.0')] = ('stopped', '')
    with pytest.raises(KeyboardInterrupt):
        pip.run(['install', 'ci-beta'])


def test_a_listing_the_host_could_not_give(host, run, monkeypatch):
    monkeypatch.setattr(ci, 'host_install', lambda op, arg: ('failed', 'out of memory'))
    assert run('install', 'ci-beta') == (1, '', (
        "ERROR: the host could not list the session's wheelhouse: out of memory\n"))


def test_site_is_appended_once_and_imports_at_once(host, run):
    before = list(sys.path)
    sys.path_importer_cache[host.site] = None  # as a path hook leaves a missing directory
    assert run('install', 'ci-beta==1.0')[0] == 0
    assert sys.path == before + [host.site]
    assert sys.path_importer_cache.get(host.site) is not None or (
        host.site not in sys.path_importer_cache)
    assert importlib.import_module('ci_beta').VERSION == '1.0'
    assert run('install', 'ci-pre')[0] == 0
    assert sys.path == before + [host.site]
    assert importlib.import_module('ci_pre').VERSION == '1.0'


# ------------------------------------------------- no wheelhouse
@pytest.mark.parametrize('how', ['no host', 'refused'])
def test_without_a_wheelhouse_install_says_so_and_lists_what_is_installed(how, run, monkeypatch):
    if how == 'no host':
        monkeypatch.delattr(ci, 'host_install', raising=False)
    else:
        monkeypatch.setattr(ci, 'host_install', lambda op, arg: (
            'refused', 'package installation is not enabled in this session (the host set no'
                       ' wheelhouse)'), raising=False)
    status, out, err = run('install', 'ci-beta')
    assert (status, out) == (1, '')
    assert err.startswith('ERROR: package installation is not enabled in this session (no'
                          ' wheelhouse); these are installed: ')
    assert re.search(r', numpy \d[^,]*, ', err) and err.endswith('\n')
    # What is installed already is no error.
    numpy = pip.installed()['numpy']
    assert run('install', 'numpy') == (0, (
        f'Requirement already satisfied: numpy in {numpy.location} ({numpy.version})\n'), '')


# ------------------------------------------------ list, freeze, show
@pytest.fixture
def dists(tmp_path, monkeypatch):
    """sys.path of one directory with three distributions."""
    lib = tmp_path / 'lib'
    lib.mkdir()
    write_dist(lib, 'Alpha-Pkg', '1.0', ['beta; python_version > "3"', 'gamma; extra == "x"'],
               summary='The first')
    write_dist(lib, 'beta', '2.0.1')
    write_dist(lib, 'pip', '23.0')
    monkeypatch.setattr(sys, 'path', [str(lib)])
    return str(lib)


def test_list_in_pips_columns_and_formats(dists, run):
    assert run('list') == (0, ('Package   Version\n'
                               '--------- -------\n'
                               'Alpha-Pkg 1.0\n'
                               'beta      2.0.1\n'
                               'pip       23.0\n'), '')
    assert run('list', '--format=freeze') == (0, 'Alpha-Pkg==1.0\nbeta==2.0.1\npip==23.0\n', '')
    assert json.loads(run('list', '--format', 'json')[1]) == [
        {'name': 'Alpha-Pkg', 'version': '1.0'}, {'name': 'beta', 'version': '2.0.1'},
        {'name': 'pip', 'version': '23.0'}]
    assert run('list', '--not-required', '--exclude', 'pip')[1].endswith('Alpha-Pkg 1.0\n')
    assert run('list', '-v')[1].splitlines()[2] == f'Alpha-Pkg 1.0     {dists}'
    assert run('list', '--outdated')[0] == 1


def test_freeze_leaves_out_the_build_tools(dists, run):
    assert run('freeze') == (0, 'Alpha-Pkg==1.0\nbeta==2.0.1\n', '')
    assert run('freeze', '--all') == (0, 'Alpha-Pkg==1.0\nbeta==2.0.1\npip==23.0\n', '')


def test_show_as_pip_shows(dists, run):
    assert run('show', 'alpha_pkg', 'BETA') == (0, (
        'Name: Alpha-Pkg\nVersion: 1.0\nSummary: The first\nHome-page: \nAuthor: \n'
        f'Author-email: \nLicense: \nLocation: {dists}\nRequires: beta\nRequired-by: \n'
        '---\n'
        'Name: beta\nVersion: 2.0.1\nSummary: \nHome-page: \nAuthor: \nAuthor-email: \n'
        f'License: \nLocation: {dists}\nRequires: \nRequired-by: Alpha-Pkg\n'), '')
    assert run('show', 'beta', 'nope')[2] == 'WARNING: Package(s) not found: nope\n'
    assert run('show', 'nope') == (1, '', 'WARNING: Package(s) not found: nope\n')
    assert run('show') == (1, '', 'ERROR: Please provide a package name or names.\n')
    assert run('show', '-f', 'beta')[1].endswith(
        'Files:\nCannot locate RECORD or installed-files.txt\n')


# ------------------------------------------------ the other commands
def test_commands_the_sandbox_cannot_run_are_refused_in_words(run):
    status, out, err = run('uninstall', '-y', 'numpy')
    assert (status, out) == (1, '')
    assert err.startswith('ERROR: uninstalling is not supported in this session')
    assert 'no network' in run('download', 'numpy')[2]
    assert run('check')[2].startswith('ERROR: pip check is not available in this sandbox;')
    assert run('instal', 'x') == (1, '', 'ERROR: unknown command "instal" - maybe you meant'
                                         ' "install"\n')
    assert run('--version') == (0, f'pip {pip.version()} from codeinterp (the session\'s'
                                   f' wheelhouse) (python {sys.version_info[0]}.'
                                   f'{sys.version_info[1]})\n', '')
    assert run()[1].startswith('Usage:\n  pip <command> [options]')
    assert run('help', 'install')[1] == (
        'Usage:\n  pip install [options] <requirement specifier> ...\n'
        '  pip install [options] -r <requirements file> ...\n')


def test_the_magic_and_the_command_lines_that_run_pip(host, capsys):
    assert pip.magic('install -q "ci-beta<2"') is None
    assert host.installed == [wheel_file('ci-beta', '1.0')]
    assert pip.magic('install "ci-beta') is None
    assert 'No closing quotation' in capsys.readouterr().err
    for words, args in ((['pip', 'list'], ['list']), (['pip3.11', 'list'], ['list']),
                        (['/usr/bin/python3', '-m', 'pip', 'list'], ['list']),
                        (['python', '-mpip', 'list'], ['list']), (['pip3'], []),
                        (['python', 'x.py'], None), (['ls'], None), (['pipx', 'list'], None)):
        assert pip.pip_arguments(words) == args, words
    assert pip.system("pip install -q 'ci-pre>=1'") == 0
    assert pip.system('python3 -m pip install nonexistent') == 1
    for cmd in ('ls', 'pip install ci-beta>=2', 'pip list | grep x', 'pip list; ls'):
        with pytest.raises(pip.Refused) as e:
            pip.system(cmd)
        assert 'shell commands are disabled in this sandbox' in str(e.value)
    assert pip.captured('pip freeze --all').count('\n') >= 2
    assert host.installed == [wheel_file('ci-beta', '1.0'), wheel_file('ci-pre', '1.0')]


# ------------------------------------------------------ import pip
def test_import_pip_gives_main_from_the_wheelhouse(host, capsys, monkeypatch):
    monkeypatch.delitem(sys.modules, 'pip', raising=False)
    import pip as shim
    assert shim.main is pip.main and shim.__version__ == pip.version()
    assert shim.main(['install', 'ci-beta==1.0']) == 0
    assert 'Successfully installed ci-beta-1.0' in capsys.readouterr().out
    assert shim.main(['install', 'nonexistent']) == 1
    assert shim.main(['install', '--bogus']) == 2
    assert shim.main(['uninstall', 'ci-beta']) == 1
    assert shim.main('install ci-pre') == 0
    assert shim.main() == 0
    assert host.installed == [wheel_file('ci-beta', '1.0'), wheel_file('ci-pre', '1.0')]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module('pip._internal')
    monkeypatch.delitem(sys.modules, 'pip')


# --------------------------------------- versions, specifiers, markers
VERSIONS = ['0', '0.0', '1', '1.0', '1.0.0', '1.0.post1', '1.0-1', '1.0.r2', '1.0a1', '1.0alpha2',
            '1.0b2', '1.0rc1', '1.0c1', '1.0pre3', '1.0.dev0', '1.0a1.dev1', '1.0.post1.dev2',
            '1.0+local', '1.0+1', '1.0+abc.5', '1.0+5.abc', '1.1', '1.2.3', '1.2', '2.0',
            '2.0.0rc1', '1!0.5', '1.10', '1.9', 'v1.0', '1.0.0.0.1', '3.0', '3.0.post1', '3.0+x',
            '3.0.dev1', '2.2', '2.2.5', '2.3', '1.4.5a4', '1.4.6', '1.0-dev', '1.0_RC_1']
SPECIFIERS = ['==1.0', '==1.0.0', '==1.*', '==1.0.*', '==2.*', '!=1.0', '!=1.*', '>=1.0', '<=1.0',
              '>1.0', '<2.0', '<2.0rc1', '<3.0', '>3.0', '>3.0.post0', '~=2.2', '~=2.2.0',
              '~=1.4.5a4', '~=2.2.post3', '===1.0', '===1.0a1', '==1.0+local', '>=1.0a1',
              '<1!0', '==1!0.5', '>=1.0.dev0', '==2.0.0rc1', '== 1.0', '>= v1.0', '!=1.0+local',
              '<=1.0.post1']
MARKERS = ['python_version >= "3.8"', "python_version < '3'", 'python_version > "3"',
           'sys_platform == "linux" and os_name == "posix"',
           '(python_version < "3" or sys_platform == "linux") and extra == "dev"',
           'platform_machine in "x86_64 aarch64 i686"', '"linux" in sys_platform',
           "python_version not in '2.7, 3.4'", 'implementation_name == "cpython"',
           'python_full_version != "1.0"', 'python_version ~= "3.1"', 'extra == "dev"',
           'os_name == "nt" or os_name == "posix" and python_version < "3"']


def test_the_fallbacks_versions_order_as_packagings():
    for a in VERSIONS:
        assert str(pip.Version(a)) == str(PVersion(a)), a
        assert pip.Version(a).is_prerelease == PVersion(a).is_prerelease, a
        for b in VERSIONS:
            for op in ('__lt__', '__eq__', '__le__'):
                assert getattr(pip.Version(a), op)(pip.Version(b)) == getattr(
                    PVersion(a), op)(PVersion(b)), (a, op, b)
    for bad in ('', 'abc', '1.0.', '1..0', '1.0-', '1.0+', 'a1.0', '1.0 2'):
        with pytest.raises(ValueError):
            pip.Version(bad)


def test_the_fallbacks_specifiers_match_as_packagings():
    for s in SPECIFIERS:
        mine, theirs = pip.Specifier(s), PSpecifier(s)
        assert mine.prereleases == theirs.prereleases, s
        for v in VERSIONS:
            assert mine.contains(pip.Version(v)) == theirs.contains(PVersion(v), True), (s, v)
    for bad in ('=1.0', '1.0', '==', '>=', '==1.0.*.1', '>=1.0.*', '~=1', '<1.0+local',
                '==1.0rc1.*', '~=1.0+x', '=>1.0', '==1.0 2'):
        with pytest.raises(ValueError):
            pip.Specifier(bad)
        with pytest.raises(ValueError):
            PSpecifier(bad)


def test_the_fallbacks_markers_evaluate_as_packagings():
    for m in MARKERS:
        assert pip.evaluate_marker(m) == PMarker(m).evaluate({'extra': ''}), m
    for bad in ('python_version >', 'nosuch == "1"', '(python_version < "3"', 'python_version',
                '"a" == "b" and', 'python_version < "3" xor'):
        with pytest.raises(ValueError):
            pip.evaluate_marker(bad)


def test_requirements_parse_as_pep_508_says(backend):
    r = pip.Requirement('Name_X[extra1, extra2] >=1.0,<2 ; python_version > "3"')
    assert (r.name, r.key, r.extras, str(r), r.marker, r.url) == (
        'Name_X', 'name-x', ('extra1', 'extra2'), 'Name_X[extra1,extra2]>=1.0,<2',
        'python_version > "3"', None)
    assert r.applies() and r.contains(pip.parse_version('1.5'))
    assert not r.contains(pip.parse_version('2.0'))
    assert str(pip.Requirement('ci-beta (>=1.0)')) == 'ci-beta>=1.0'
    assert pip.Requirement('x @ https://example.org/x.whl').url == 'https://example.org/x.whl'
    assert not pip.Requirement('x; python_version < "3"').applies()
    for bad in ('x=1.0', '>=1.0', 'x[', 'x @ https://example.org/x.whl >=1', 'x;', 'x>=1.0,',
                '-x', 'x[a b]'):
        with pytest.raises(ValueError):
            pip.Requirement(bad)


def test_packaging_is_used_when_it_imports(monkeypatch):
    monkeypatch.setattr(pip, '_backend', [])
    assert pip.backend().name == 'packaging'
    monkeypatch.setattr(pip, '_backend', [])
    monkeypatch.setitem(sys.modules, 'packaging.version', None)  # as a manifest leaving it out
    assert pip.backend() is pip._Fallback
