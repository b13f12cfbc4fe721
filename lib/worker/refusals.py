"""The sandbox's refusals, in words a model can act on.

The audit hook raises, before the system call, a PermissionError that
names the policy; explain() rewrites, keeping the exception's type and
errno, the kernel's bare refusal of a path outside the session or of a
file mode that would let another user in, a
multiprocessing lock or process the sandbox cannot give, and a limit
reached (MemoryError, "File too large"), which it names with its value;
Refused is what the IPython layer (shell.py) raises for what the
sandbox forbids by design; sysconf() stands in for os.sysconf where
glibc would ask the refused sysinfo(2), umask() keeps the 077 the
filter demands, and shutil copies a mode with the owner's bits only
where the filter refuses the rest. None of this is a boundary: the
seccomp filter and Landlock refuse the same things with the hook
bypassed. What was refused is also noted, once per kind and detail and
counted, for the audit trail: take() hands the cell's notes to the
RESULT's REFUSALS field (lib/proto.h). The worker embeds this file
(tools/embed.sh) as _codeinterp_refusals.
"""
import errno, os, resource, shutil, socket, struct, sys

import _codeinterp as _ci
import _codeinterp_outputs as _out

SHELL = ('shell commands are disabled in this sandbox (no new processes);'
         ' use Python instead: os.listdir, pathlib, shutil, open')
INSTALL = 'installing packages is disabled in this sandbox (no network, no new processes)'
_NET = 'network access is disabled in this sandbox'
_PROC = ('creating processes is disabled in this sandbox'
         ' (subprocess, os.system, os.fork)')
# multiprocessing's locks, queues and pools need named semaphores in
# /dev/shm, which the sandbox does not have, and its processes forks.
# (ThreadPool too: its change notifier is a multiprocessing queue.)
_POOL = ('creating processes is disabled in this sandbox, and so are multiprocessing'
         " and ProcessPoolExecutor (multiprocessing's ThreadPool, Queue and Lock too,"
         ' for want of shared semaphores); use threads instead:'
         ' concurrent.futures.ThreadPoolExecutor or threading.Thread')
_MEMORY = "the cell reached the session's memory limit of {}"
_FILE_SIZE = "the file reached the session's file size limit of {}"
_QUOTA = ("the session's {} quota of {} is full (the workspace, TMPDIR and HOME"
          ' share it); delete files to make room')
_SIGNAL = 'sending signals to other processes is disabled in this sandbox'
_LINK = ('creating symbolic links is disabled in this sandbox;'
         ' copy the file instead (shutil.copy)')
_MODE = ('this sandbox keeps every file private to its owner: {} may not'
         ' give the group or others any access, nor set the setuid, setgid'
         ' or sticky bit (mode {:#o} asked; a mode within 0o700 is allowed)')
_PROCESS_EVENTS = frozenset({'subprocess.Popen', 'os.fork', 'os.forkpty',
    'os.posix_spawn', 'os.exec', 'os.spawn', 'pty.spawn'})
_last_open = [None]
_last_mode = [None]  # (event, path, mode) of the last os.chmod or os.mkdir
_SELF = (lambda: 0).__code__.co_filename  # the embedded modules' name
# The cell's refusals: {(kind, detail): times}, in the order first seen,
# and the attempts left out past _ci.REFUSALS_MAX distinct ones.
_noted = {}
_left_out = [0]
# The audit events that name a path the cell reads or writes (args[0]),
# and which of them write; 'open' writes by its mode or flags.
_PATH_EVENTS = frozenset({'open', 'os.listdir', 'os.scandir', 'os.remove',
                          'os.rename', 'os.rmdir', 'os.mkdir', 'os.truncate'})
_WRITE_EVENTS = frozenset({'os.remove', 'os.rename', 'os.rmdir', 'os.mkdir',
                           'os.truncate'})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def note(kind, detail):
    """Notes that the sandbox refused the cell detail (a str) of kind (a
    _ci.REFUSAL_* value); never raises."""
    try:
        data = detail.encode('utf-8', 'replace').replace(b'\0', b'?')
        if len(data) > _ci.REFUSAL_DETAIL_MAX:
            cut = data[:_ci.REFUSAL_DETAIL_MAX - 3].decode('utf-8', 'ignore')
            data = cut.encode('utf-8') + b'...'
        key = (kind, data or b'?')
        if key in _noted:
            _noted[key] += 1
        elif len(_noted) < _ci.REFUSALS_MAX:
            _noted[key] = 1
        else:
            _left_out[0] += 1
    except Exception:
        pass


def take():
    """The REFUSALS field of the refusals noted since the last take(),
    as bytes (None for none), and forgets them."""
    if not _noted:
        _left_out[0] = 0
        return None
    parts = [struct.pack('=I', _left_out[0])]
    for (kind, data), times in _noted.items():
        parts.append(struct.pack('=III', kind, min(times, 0xFFFFFFFF), len(data)))
        parts.append(data)
    _noted.clear()
    _left_out[0] = 0
    return b''.join(parts)


def _refuse(kind, detail, message):
    note(kind, detail)
    return PermissionError(message)


def _note_path(event, args):
    # A path outside what the session may read (or, for a write, write),
    # by the paths Landlock is given (lib/worker/lockdown.c): Landlock or
    # the worker's mounts will refuse it. Only once the
    # session's directories are known (a spare's are not).
    if not _session['writable'] or not args:
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or not path:
        return
    if event == 'open':
        mode, flags = args[1] or '', args[2] or 0
        write = (isinstance(mode, str) and any(c in mode for c in 'wax+')) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS)
    else:
        write = event in _WRITE_EVENTS
    if not path.startswith('/'):
        # Relative to the cwd, which is the cell's (the workspace, unless
        # it moved): only a path that climbs may leave it, and asking
        # getcwd() for every other costs a deep tree's walk per call.
        if '..' not in path.split('/'):
            return
        path = os.path.join(os.getcwd(), path)
    path = os.path.normpath(path)
    allowed = _session['writable'] + ('/dev/null',) if write else _session['readable']
    if not _under(path, allowed):
        note(_ci.REFUSAL_PATH, ('write ' if write else 'read ') + path)


def _socket_detail(args):
    # socket.__new__'s (sock, family, type, proto), by the names the
    # socket module gives them: "socket AF_INET6 SOCK_STREAM".
    names = []
    for kind, value in ((socket.AddressFamily, args[1]), (socket.SocketKind, args[2])):
        try:
            names.append(kind(value).name)
        except (ValueError, TypeError):
            names.append(repr(value))
    return 'socket ' + ' '.join(names)


def audit(event, args):
    """The audit hook (sys.addaudithook); install() puts it in place."""
    if event in _PATH_EVENTS:
        if event == 'open':
            _last_open[0] = args
        elif event == 'os.mkdir':
            _last_mode[0] = (event, args[0], args[1])
        try:
            _note_path(event, args)
        except Exception:
            # getcwd() fails in a directory too deep for a path
            # (ENAMETOOLONG) or gone: the call itself must still be made.
            pass
    elif event == 'os.chmod':
        _last_mode[0] = (event, args[0], args[1])
    elif event in _PROCESS_EVENTS:
        raise _refuse(_ci.REFUSAL_PROCESS, f'{event} {args[:2]!r}', _PROC)
    elif event in ('socket.getaddrinfo', 'socket.gethostbyname',
                   'socket.gethostbyaddr'):
        # A name lookup would only fail, and say less.
        raise _refuse(_ci.REFUSAL_NETWORK, f'{event} {args[0]!r}', _NET)
    elif event == 'socket.__new__':
        # socket.socketpair() and socket.dup() wrap a descriptor they
        # already have (asyncio needs them); anything else would be new.
        f = sys._getframe(1)
        if not (f.f_code.co_name == '__init__'
                and f.f_locals.get('fileno') is not None):
            raise _refuse(_ci.REFUSAL_NETWORK, _socket_detail(args), _NET)
    elif event == 'os.kill':
        if args[0] != _session['pid']:
            raise _refuse(_ci.REFUSAL_SIGNAL, f'os.kill pid={args[0]} signal={args[1]}',
                          _SIGNAL)
    elif event == 'os.killpg':
        raise _refuse(_ci.REFUSAL_SIGNAL, f'os.killpg pgid={args[0]} signal={args[1]}',
                      _SIGNAL)
    elif event == 'os.symlink':
        raise _refuse(_ci.REFUSAL_SYMLINK, f'{args[1]!r} -> {args[0]!r}', _LINK)
    elif event == 'os.system':
        # os.system reports failure as a status: keep that, but say why.
        command = os.fsdecode(args[0]) if isinstance(args[0], bytes) else args[0]
        note(_ci.REFUSAL_PROCESS, f'os.system {command!r}')
        try:
            print(f'os.system: {_PROC}', file=sys.stderr)
        except Exception:
            pass

_prefixes = {}  # roots: their prefixes, each ending in '/'


def _under(path, roots):
    prefixes = _prefixes.get(roots)
    if prefixes is None:
        prefixes = _prefixes[roots] = tuple(r.rstrip('/') + '/' for r in roots)
    return path in roots or path.startswith(prefixes)

def _limit(which):
    # The soft limit of resource which, None when there is none.
    soft = resource.getrlimit(which)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def _reworded(exc, msg, cls=None):
    # exc as cls (its own type unless given) with the message msg: its
    # errno, traceback, cause, context and notes kept.
    new = (cls or type(exc))(msg)
    if isinstance(exc, OSError):
        new.errno = exc.errno
    new.__cause__, new.__context__ = exc.__cause__, exc.__context__
    new.__suppress_context__ = exc.__suppress_context__
    if getattr(exc, '__notes__', None):
        new.__notes__ = list(exc.__notes__)
    return new.with_traceback(exc.__traceback__)


def _limit_reached(exc):
    # A MemoryError that says nothing (CPython's) or is numpy's "Unable to
    # allocate", or "File too large", under a limit of the session's.
    if isinstance(exc, MemoryError):
        limit = _limit(resource.RLIMIT_AS)
        theirs = str(exc)
        numpy = type(exc).__qualname__ == '_ArrayMemoryError'
        if limit is None or (theirs and not numpy):
            return None
        msg = _MEMORY.format(_out.size(limit))
        # numpy's class shows as MemoryError, but its str() ignores args.
        return _reworded(exc, f'{msg}: {theirs}' if theirs else msg,
                         MemoryError if numpy else None)
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        limit = _limit(resource.RLIMIT_FSIZE)
        if limit is not None:
            return _reworded(exc, _FILE_SIZE.format(_out.size(limit)))
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC and _session['quota']:
        # The session directory is the quota's tmpfs: its size and
        # inodes are the quota's, and the one used up is the one full.
        try:
            fs = os.statvfs(os.path.dirname(_session['writable'][0]))
        except OSError:
            return None
        if fs.f_favail == 0:
            return _reworded(exc, _QUOTA.format('inode', f'{fs.f_files} files'))
        return _reworded(exc, _QUOTA.format('disk', _out.size(fs.f_blocks * fs.f_frsize)))
    return None


# multiprocessing's functions that fail for the sandbox: its named
# semaphore (SemLock) and shared memory, with no /dev/shm; a process
# started by fork (the audit hook refuses it) or by exec (seccomp does).
_MP_DIR = os.path.join(os.path.dirname(os.__file__), 'multiprocessing')
_MP_RAISERS = frozenset({('synchronize.py', '__init__'), ('shared_memory.py', '__init__'),
                         ('popen_fork.py', '_launch'), ('util.py', 'spawnv_passfds')})


def _multiprocessing(exc):
    # An OSError whose last frame (not the audit hook's) is one of those.
    if not isinstance(exc, OSError):
        return None
    last, tb = None, exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename != _SELF:
            last = code
        tb = tb.tb_next
    if last is None:
        return None
    where, name = os.path.split(last.co_filename)
    if where == _MP_DIR and (name, last.co_name) in _MP_RAISERS:
        return _reworded(exc, _POOL)
    return None


def _path_refused(exc):
    # A path outside the session: refused by Landlock (PermissionError),
    # absent from the worker's mounts (FileNotFoundError) or on a
    # read-only mount (OSError EROFS).
    read_only = type(exc) is OSError and exc.errno == errno.EROFS
    if type(exc) not in (PermissionError, FileNotFoundError) and not read_only:
        return None
    name = exc.filename
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if not isinstance(name, str) or not name:
        return None
    path = os.path.abspath(name)
    last = _last_open[0]
    if read_only:
        write = True
    elif last is not None and last[0] in (exc.filename, name):
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
        note(_ci.REFUSAL_PATH, f'read {path} (not in the package manifest)')
    elif write and not _under(path, _session['writable']):
        msg = _session['write']
    elif not write and not _under(path, _session['readable']):
        msg = (f'this sandbox can only read the session directories and'
               f' the Python installation; {path} is outside them')
    else:
        return None
    return _reworded(exc, msg)


def _mode_refused(exc):
    # The filter's EPERM for a mode outside what it allows: chmod of any
    # bit but the owner's, mkdir of a setuid, setgid or sticky bit.
    if type(exc) is not PermissionError or exc.errno != errno.EPERM:
        return None
    last = _last_mode[0]
    if last is None:
        return None
    event, path, mode = last
    if isinstance(path, int):
        same = exc.filename is None
    else:
        same = exc.filename is not None and os.fspath(exc.filename) == os.fspath(path)
    refused = mode & (0o7077 if event == 'os.chmod' else 0o7000)
    if not same or not isinstance(mode, int) or not refused:
        return None
    note(_ci.REFUSAL_MODE, f'{event} {path!r} mode={mode:#o}')
    what = 'a mode set with chmod' if event == 'os.chmod' else 'a new directory'
    return _reworded(exc, _MODE.format(what, mode))


def explain(exc):
    """exc, or for what the sandbox refused or a limit it reached an
    exception of the same type, errno and traceback whose message names
    the policy or the limit."""
    try:
        return (_limit_reached(exc) or _multiprocessing(exc) or _mode_refused(exc)
                or _path_refused(exc) or exc)
    except BaseException:
        # An exception whose attributes raise (a hostile __str__ or errno)
        # is reported as it is.
        return exc


class Refused(PermissionError):
    """What the sandbox refuses by design, named PermissionError as the
    audit hook's refusals are; the runner shows only the cell's frames
    of its traceback."""


# Shown as the builtin it is, wherever a traceback names it.
Refused.__name__ = Refused.__qualname__ = 'PermissionError'
Refused.__module__ = 'builtins'

# What one session may reach, set by configure(); these are a spare's.
_session = {'pid': os.getpid(), 'readable': (), 'writable': (), 'write': '', 'quota': False}


def configure(workspace, tmp, home, pid, quota):
    """The session's directories, pid and whether its directory is the
    tmpfs of a disk quota, for the messages above."""
    writable = tuple(os.path.join(os.path.dirname(workspace), d) for d in
                     ('workspace', 'config', 'tmp')) + (tmp,)
    _session['pid'] = pid
    _session['quota'] = quota
    _session['writable'] = writable
    _session['readable'] = writable + (
        '/usr', '/lib', '/lib64', '/etc/ld.so.cache', '/etc/localtime',
        '/etc/matplotlibrc', '/etc/mime.types', '/sys/devices/system/cpu',
        '/proc/self', f'/proc/{pid}', '/dev/null', '/dev/zero', '/dev/random',
        '/dev/urandom')
    _session['write'] = ('this sandbox can only write inside the session workspace'
                         f' ({workspace}), TMPDIR ({tmp}) and HOME ({home})')


_sysconf = os.sysconf


def sysconf(name):
    """os.sysconf, but for SC_PHYS_PAGES and SC_AVPHYS_PAGES, which
    glibc computes from sysinfo(2): the seccomp filter refuses that call,
    as it tells the machine's memory and process count, and glibc then
    answers 0 and an uninitialised value. These answer the session's
    own figures instead: its memory limit, and what of it the worker's
    address space does not use yet, in pages."""
    key = os.sysconf_names.get(name, name)
    if key not in (os.sysconf_names['SC_PHYS_PAGES'], os.sysconf_names['SC_AVPHYS_PAGES']):
        return _sysconf(name)
    limit = _limit(resource.RLIMIT_AS)
    if limit is None:
        return _sysconf(name)
    page = _sysconf('SC_PAGE_SIZE')
    if key == os.sysconf_names['SC_PHYS_PAGES']:
        return limit // page
    with open('/proc/self/statm') as f:
        used = int(f.read().split()[0])
    return max(0, limit // page - used)


def _owner_bits(copy):
    """shutil's @copy (copymode or copystat), but a mode the filter
    refuses, one with bits for the group or others, is copied with the
    owner's bits only, as the umask does for a new file: shutil.copy and
    copytree of a 0644 file then work as they do in Jupyter. A chmod the
    cell asks for itself is still refused, and told why."""
    def owner_bits(src, dst, *, follow_symlinks=True):
        try:
            return copy(src, dst, follow_symlinks=follow_symlinks)
        except PermissionError as exc:
            if exc.errno != errno.EPERM:
                raise
            mode = os.stat(src, follow_symlinks=follow_symlinks).st_mode
            if not mode & 0o7077:
                raise
            os.chmod(dst, mode & 0o700, follow_symlinks=follow_symlinks)
    owner_bits.__name__ = copy.__name__
    owner_bits.__qualname__ = copy.__qualname__
    owner_bits.__doc__ = copy.__doc__
    return owner_bits


_umask = os.umask


def umask(mask):
    """os.umask, but it can only add to the 077 the worker keeps (the
    filter refuses any other): the idiom old = os.umask(0); os.umask(old)
    that reads the mask then works, and reads 0o77."""
    return _umask(mask | 0o077)


def install():
    sys.addaudithook(audit)
    # The worker has no network, IPv6 included; and so urllib3's import
    # does not probe it with a socket (a refusal the cell never asked).
    socket.has_ipv6 = False
    os.sysconf = sysconf
    os.umask = umask
    shutil.copymode = _owner_bits(shutil.copymode)
    shutil.copystat = _owner_bits(shutil.copystat)
