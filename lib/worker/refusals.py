"""The sandbox's refusals, in words a model can act on.

The audit hook raises, before the system call, a PermissionError that
names the policy; explain() rewrites the kernel's bare refusal of a path
outside the session; Refused is what the IPython layer (shell.py) raises
for what the sandbox forbids by design. None of this is a boundary: the
seccomp filter and Landlock refuse the same things with the hook
bypassed. The worker embeds this file (tools/embed.sh) as
_codeinterp_refusals.
"""
import os, sys

import _codeinterp as _ci

SHELL = ('shell commands are disabled in this sandbox (no new processes);'
         ' use Python instead: os.listdir, pathlib, shutil, open')
INSTALL = 'installing packages is disabled in this sandbox (no network, no new processes)'
_NET = 'network access is disabled in this sandbox'
_PROC = ('creating processes is disabled in this sandbox'
         ' (subprocess, os.system, os.fork)')
_SIGNAL = 'sending signals to other processes is disabled in this sandbox'
_LINK = ('creating symbolic links is disabled in this sandbox;'
         ' copy the file instead (shutil.copy)')
_PROCESS_EVENTS = frozenset({'subprocess.Popen', 'os.fork', 'os.forkpty',
    'os.posix_spawn', 'os.exec', 'os.spawn', 'pty.spawn'})
_last_open = [None]

def audit(event, args):
    """The audit hook (sys.addaudithook); install() puts it in place."""
    if event == 'open':
        _last_open[0] = args
    elif event in _PROCESS_EVENTS:
        raise PermissionError(_PROC)
    elif event in ('socket.getaddrinfo', 'socket.gethostbyname',
                   'socket.gethostbyaddr'):
        # A name lookup would only fail, and say less.
        raise PermissionError(_NET)
    elif event == 'socket.__new__':
        # socket.socketpair() and socket.dup() wrap a descriptor they
        # already have (asyncio needs them); anything else would be new.
        f = sys._getframe(1)
        if not (f.f_code.co_name == '__init__'
                and f.f_locals.get('fileno') is not None):
            raise PermissionError(_NET)
    elif event == 'os.kill':
        if args[0] != _session['pid']:
            raise PermissionError(_SIGNAL)
    elif event == 'os.killpg':
        raise PermissionError(_SIGNAL)
    elif event == 'os.symlink':
        raise PermissionError(_LINK)
    elif event == 'os.system':
        # os.system reports failure as a status: keep that, but say why.
        try:
            print(f'os.system: {_PROC}', file=sys.stderr)
        except Exception:
            pass

def _under(path, roots):
    return any(path == r or path.startswith(r.rstrip('/') + '/') for r in roots)

def explain(exc):
    """exc, or for a refusal of a path outside the session an exception
    of the same type, errno and traceback whose message names the
    policy."""
    try:
        if type(exc) not in (PermissionError, FileNotFoundError):
            return exc
        name = exc.filename
        if isinstance(name, bytes):
            name = os.fsdecode(name)
        if not isinstance(name, str) or not name:
            return exc
        path = os.path.abspath(name)
        last = _last_open[0]
        if last is not None and last[0] in (exc.filename, name):
            mode, flags = last[1] or '', last[2] or 0
            write = (any(c in mode for c in 'wax+') or flags &
                     (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC))
        else:
            write = _under(path, _session['readable'])
        if (not write and type(exc) is PermissionError and _ci.MANIFEST
                and _under(path, _ci.MANIFEST_DIRS)
                and not _ci.manifest_listed(os.path.realpath(path))):
            msg = (f'the signed package manifest does not list {path};'
                   ' this session reads only the packages it lists')
        elif write and not _under(path, _session['writable']):
            msg = _session['write']
        elif not write and not _under(path, _session['readable']):
            msg = (f'this sandbox can only read the session directories and'
                   f' the Python installation; {path} is outside them')
        else:
            return exc
        new = type(exc)(msg)
        new.errno = exc.errno
        return new.with_traceback(exc.__traceback__)
    except Exception:
        return exc


class Refused(PermissionError):
    """What the sandbox refuses by design, named PermissionError as the
    audit hook's refusals are; the runner shows only the cell's frames
    of its traceback."""


# Shown as the builtin it is, wherever a traceback names it.
Refused.__name__ = Refused.__qualname__ = 'PermissionError'
Refused.__module__ = 'builtins'

# What one session may reach, set by configure(); these are a spare's.
_session = {'pid': os.getpid(), 'readable': (), 'writable': (), 'write': ''}


def configure(workspace, tmp, home, pid):
    """The session's directories and pid, for the messages above."""
    writable = tuple(os.path.join(os.path.dirname(workspace), d) for d in
                     ('workspace', 'config', 'tmp')) + (tmp,)
    _session['pid'] = pid
    _session['writable'] = writable
    _session['readable'] = writable + (
        '/usr', '/lib', '/lib64', '/etc/ld.so.cache', '/etc/localtime',
        '/etc/matplotlibrc', '/etc/mime.types', '/sys/devices/system/cpu',
        '/proc/self', f'/proc/{pid}', '/dev/null', '/dev/zero', '/dev/random',
        '/dev/urandom')
    _session['write'] = ('this sandbox can only write inside the session workspace'
                         f' ({workspace}), TMPDIR ({tmp}) and HOME ({home})')


def install():
    sys.addaudithook(audit)
