"""IPython inside codeinterp-worker: the shell that notebook code expects.

Models write cells for IPython kernels: magics, `!cmd`, get_ipython(),
IPython.display, Out and In. One InteractiveShell of IPython's own
(Shell, below) serves them, made in the warm-up before the preloaded
packages are imported (pandas asks get_ipython() at its import whether it
runs in a kernel), so that a zygote's children share it. Its display
publisher and display hook turn Jupyter's messages into the run's outputs
(outputs.py); the runner (runner.py) executes the cells itself and asks
this shell only for what is IPython's: the transformation of IPython's
syntax, the formatting of values, the history, the magics.

What the sandbox forbids (shell commands, conda) is refused with a
PermissionError that names the policy and the way out, from the magics
and the shell methods that IPython's syntax becomes. pip is the one
program whose command line runs, without a process, from the session's
wheelhouse: %pip, !pip and !python -m pip, and the `pip` a cell imports
(pip.py, which the worker loads as _codeinterp_pip beside this module).
The worker embeds this file (tools/embed.sh) as _codeinterp_shell.
"""
import builtins, os, re, sys, traceback

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_magic, magics_class
from traitlets.config import Config

import _codeinterp_outputs as outputs
from _codeinterp_refusals import INSTALL, SHELL, Refused

_INLINE = 'module://matplotlib_inline.backend_inline'


def installed():
    """The installed distributions, as 'name version, ...' sorted by name."""
    from importlib import metadata
    seen = {}
    for dist in metadata.distributions():
        name = dist.metadata.get('Name')
        if name and name.lower() not in seen:
            seen[name.lower()] = f'{name} {dist.version}'
    return ', '.join(seen[k] for k in sorted(seen))


def refuse_install(*args, **kwargs):
    raise Refused(f'{INSTALL}; these are installed: {installed()}')


def refuse_shell(*args, **kwargs):
    raise Refused(SHELL)


def _pip():
    # Imported when first used, not with this module: the worker loads it
    # as _codeinterp_pip (lib/worker/interp.c).
    import _codeinterp_pip
    return _codeinterp_pip


# A command line that runs pip (pip.py has the last word): pip, pip3,
# pip3.11, python -m pip, any path before them.
_PIP_COMMAND = re.compile(r'\s*(?:\S*/)?(?:pip(?:3(?:\.\d+)?)?(?:\s|$)'
                          r'|python(?:3(?:\.\d+)?)?\s+-m\s*pip(?:\s|$))')


class PipImport:
    """The finder of `import pip`, before sys.path's: the module whose
    main() runs pip's command line from the session's wheelhouse
    (pip.fill_shim says why it is always this one)."""

    def find_spec(self, name, path=None, target=None):
        if name != 'pip':
            return None
        from importlib.machinery import ModuleSpec
        return ModuleSpec('pip', self, origin='codeinterp')

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        _pip().fill_shim(module)

    def invalidate_caches(self):
        pass


class Publisher(DisplayPublisher):
    """display_data and update_display_data, with the display id of their
    transient part, and clear_output, as outputs of the run."""

    def publish(self, data, metadata=None, source=None, *, transient=None,
                update=False, **kwargs):
        ident = outputs.display_id((transient or {}).get('display_id'))
        if update and ident is None:
            return  # Jupyter drops an update that names no display
        kind = outputs.UPDATE_DISPLAY_DATA if update else outputs.DISPLAY_DATA
        outputs.emit(kind, *outputs.prepare(data, self.shell.complain), ident)

    def clear_output(self, wait=False):
        outputs.clear(bool(wait))


class Hook(DisplayHook):
    """The display hook of a cell that IPython runs itself (a cell magic
    calling run_cell, as %%capture does): an execute_result, as
    ipykernel's, not an Out[] prompt on stdout."""

    def start_displayhook(self):
        pass

    def write_output_prompt(self):
        pass

    def write_format_data(self, format_dict, md_dict=None):
        outputs.emit(outputs.EXECUTE_RESULT, *outputs.prepare(format_dict, self.shell.complain))

    def finish_displayhook(self):
        sys.stdout.flush()
        sys.stderr.flush()


# The magics of IPython's that would install packages (%pip is
# SandboxMagics') or run programs.
INSTALLERS = ('conda', 'mamba', 'micromamba')
PROGRAMS = ('sx', 'system', 'bash', 'sh', 'script', 'perl', 'ruby', 'python', 'python2',
            'python3', 'pypy')


@magics_class
class SandboxMagics(Magics):
    """Magics whose IPython versions would leave the workspace, in
    versions that keep to it."""

    @line_magic
    def cd(self, line):
        """%cd as IPython's, only into directories inside the workspace."""
        target = line.strip().strip('\'"')
        workspace = self.shell.workspace
        if target and target not in ('-', '-q') and not target.startswith('-b'):
            path = os.path.realpath(os.path.join(os.getcwd(), os.path.expanduser(target)))
            if workspace and path != workspace and not path.startswith(workspace + os.sep):
                raise Refused('this sandbox can only change into directories inside the'
                              f' session workspace ({workspace}); {path} is outside it')
        elif not target and workspace:
            line = workspace  # %cd alone goes home, which here is the workspace
        return self.shell.magics_manager.registry['OSMagics'].cd(line)

    @line_magic
    def pip(self, line):
        """%pip as IPython's, from the session's wheelhouse: install,
        list, freeze, show (pip.py). Returns None; an error is printed."""
        return _pip().magic(line)


class Shell(InteractiveShell):
    """IPython's shell, made once per process: no history file, no
    profile of its own until a session gives it HOME, no terminal."""

    # pandas' is_terminal() and others tell a kernel by this attribute.
    kernel = None
    workspace = None

    def init_display_pub(self):
        self.display_pub = Publisher(parent=self, shell=self)
        self.configurables.append(self.display_pub)

    def init_displayhook(self):
        super().init_displayhook()
        self.displayhook = Hook(parent=self, shell=self, cache_size=self.cache_size)
        self.configurables.append(self.displayhook)
        self.display_trap.hook = self.displayhook

    # The exception IPython's own code showed during the cell (%time,
    # %timeit, %run catch what the code they run raises, and show it, as
    # ipykernel sends an error message): the runner reports it as the
    # cell's error. None between cells.
    shown = None

    def complain(self):
        """In an except clause: the exception's traceback on stderr, as
        IPython shows a representation that raised (not the cell's error:
        the cell goes on, as in a kernel)."""
        exc = sys.exc_info()[1]
        if exc is not None:
            sys.stderr.write(self.traceback_text(exc))

    # How a traceback reads on stderr: the runner gives its own, which
    # cuts the worker's frames.
    @staticmethod
    def traceback_text(exc):
        return ''.join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def showtraceback(self, exc_tuple=None, filename=None, tb_offset=None,
                      exception_only=False, running_compiled_code=False):
        exc = (exc_tuple or sys.exc_info())[1]
        if isinstance(exc, UsageError):
            self.show_usage_error(exc)
        elif exc is not None:
            sys.stderr.write(self.traceback_text(exc))
        # Not a formatter's error (IPython's catch_format_error shows it
        # so too): a representation that raised leaves the cell as it was.
        if isinstance(exc, Exception) and sys._getframe(1).f_code.co_name != 'catch_format_error':
            self.shown = exc

    def showsyntaxerror(self, filename=None, running_compiled_code=False):
        self.showtraceback()

    def show_usage_error(self, exc):
        sys.stderr.write(f'UsageError: {exc}\n')

    def enable_matplotlib(self, gui=None):
        # Figures come back as outputs whatever the backend asked for: the
        # worker keeps Agg and the runner renders what each cell leaves
        # open, as the inline backend does.
        return 'inline', _INLINE

    def system(self, cmd):
        """!cmd: pip's command line runs from the wheelhouse (pip.py),
        its status in _exit_code as IPython keeps it; any other command
        is refused."""
        cmd = self.var_expand(cmd, depth=1)
        if not _PIP_COMMAND.match(cmd):
            refuse_shell()
        self.user_ns['_exit_code'] = _pip().system(cmd)

    system_piped = system_raw = system

    def getoutput(self, cmd, split=True, depth=0):
        """x = !cmd: what pip's command line printed, as IPython's SList
        of lines (LSString unless split); any other command is refused."""
        cmd = self.var_expand(cmd, depth=depth + 1)
        if not _PIP_COMMAND.match(cmd):
            refuse_shell()
        from IPython.utils.text import LSString, SList
        text = _pip().captured(cmd)
        return SList(text.splitlines()) if split else LSString(text)

    def keep_result(self, value):
        """The last cell's value, where %xdel and others look for it
        (run_cell's ExecutionResult; %reset drops it)."""
        if self.last_execution_result is None:
            from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult
            self.last_execution_result = ExecutionResult(ExecutionInfo('', False, True, True, None))
        self.last_execution_result.result = value

    def set_next_input(self, text, replace=False):
        # %load and %recall would put text in the next cell of a notebook;
        # an agent has no next cell to look at, so it is printed.
        sys.stdout.write(text if text.endswith('\n') else text + '\n')

    def ask_exit(self):
        raise SystemExit()

    def use_home(self, home, workspace):
        """A session's HOME and workspace. IPython's store (%store,
        %bookmark) is made under HOME when first used: a session's start
        makes no directory of IPython's."""
        self.workspace = workspace
        self.db = _Store(os.path.join(home, '.ipython', 'profile_default', 'db'))
        # IPython's directory is the session's too (%load_ext puts its
        # extensions directory first on sys.path while it imports), set
        # without the observer that would make it, and no profile of the
        # warm-up's is left behind.
        self._trait_values['ipython_dir'] = os.path.join(home, '.ipython')
        self.profile_dir = None


class _Store:
    """IPython's PickleShareDB at path, made when first used."""

    def __init__(self, path):
        self._path, self._db = path, None

    def __getattr__(self, name):
        if self._db is None:
            from pickleshare import PickleShareDB
            self._db = PickleShareDB(self._path)
        return getattr(self._db, name)

    def __getitem__(self, key):
        return self.__getattr__('__getitem__')(key)

    def __setitem__(self, key, value):
        self.__getattr__('__setitem__')(key, value)

    def __delitem__(self, key):
        self.__getattr__('__delitem__')(key)


def _config():
    c = Config()
    c.HistoryManager.enabled = False      # no SQLite file; In and _i stay
    c.HistoryManager.hist_file = ':memory:'
    c.InteractiveShell.colors = 'NoColor'
    c.InteractiveShell.autocall = 0
    return c


def create(module=None):
    """The process's shell, over the namespace of module (__main__ unless
    given), as get_ipython()."""
    if module is None:
        import __main__ as module
    shell = Shell.instance(config=_config(), user_module=module)
    shell.register_magics(SandboxMagics)
    # As ipykernel's: %store is there without %load_ext.
    shell.extension_manager.load_extension('storemagic')

    for names, refuse in ((INSTALLERS, refuse_install), (PROGRAMS, refuse_shell)):
        for name in names:
            shell.register_magic_function(refuse, 'line_cell', name)
    # As in a kernel: get_ipython() outside the shell's own calls too.
    builtins.get_ipython = shell.get_ipython
    # `import pip`: ahead of sys.path's finder, behind a manifest's hook.
    from importlib.machinery import PathFinder
    if not any(isinstance(f, PipImport) for f in sys.meta_path):
        at = sys.meta_path.index(PathFinder) if PathFinder in sys.meta_path else len(sys.meta_path)
        sys.meta_path.insert(at, PipImport())
    return shell
