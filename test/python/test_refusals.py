"""explain()'s messages for a limit reached and for what the sandbox
refuses (lib/worker/refusals.py), outside a worker: the limits are
given, the session's directories made up."""
import errno
import os
import shutil
import struct

import pytest

from conftest import outputs, refusals


@pytest.fixture
def limits(monkeypatch):
    """Sets the session's RLIMIT_AS and RLIMIT_FSIZE as explain() reads
    them; None is no limit."""
    given = {}
    monkeypatch.setattr(refusals, '_limit', lambda which: given.get(which))

    def set_limits(memory=None, fsize=None):
        given[refusals.resource.RLIMIT_AS] = memory
        given[refusals.resource.RLIMIT_FSIZE] = fsize
    return set_limits


@pytest.fixture
def session(monkeypatch):
    monkeypatch.setattr(refusals, '_session', dict(refusals._session))
    monkeypatch.setattr(refusals, '_last_open', [None])
    refusals.configure('/s/workspace', '/s/tmp', '/s/config', os.getpid(), False)


def raised(exc, filename=None, name='f'):
    """exc raised from a function name compiled as filename (a frame of
    that file), with its traceback."""
    space = {}
    if filename is None:
        filename = __file__
    exec(compile(f'def {name}(exc):\n    raise exc\n', filename, 'exec'), space)
    try:
        space[name](exc)
    except BaseException as e:
        return e


def test_sizes_read_as_a_person_writes_them():
    assert outputs.size(2 << 30) == '2 GiB'
    assert outputs.size(768 << 20) == '768 MiB'
    assert outputs.size(3 << 29) == '1.5 GiB'
    assert outputs.size(64 << 20) == '64 MiB'
    assert outputs.size(1500) == '1.46 KiB'
    assert outputs.size(100) == '100 bytes' and outputs.size(1) == '1 byte'


def test_a_bare_memory_error_names_the_memory_limit(limits):
    limits(memory=768 << 20)
    exc = refusals.explain(raised(MemoryError()))
    assert type(exc) is MemoryError
    assert str(exc) == "the cell reached the session's memory limit of 768 MiB"
    assert exc.__traceback__ is not None


def test_numpys_memory_error_keeps_its_words_after_the_limit(limits):
    import numpy as np
    from numpy.core._exceptions import _ArrayMemoryError
    limits(memory=2 << 30)
    exc = refusals.explain(raised(_ArrayMemoryError((3 << 30,), np.dtype('float64'))))
    assert isinstance(exc, MemoryError)
    assert str(exc) == ("the cell reached the session's memory limit of 2 GiB:"
                        ' Unable to allocate 24.0 GiB for an array with shape (3221225472,)'
                        ' and data type float64')


def test_a_memory_error_with_words_of_its_own_or_no_limit_stays(limits):
    limits(memory=2 << 30)
    own = raised(MemoryError('my cache is full'))
    assert refusals.explain(own) is own
    limits(memory=None)
    bare = raised(MemoryError())
    assert refusals.explain(bare) is bare


def test_file_too_large_names_the_file_size_limit(limits):
    limits(fsize=64 << 20)
    exc = refusals.explain(raised(OSError(errno.EFBIG, 'File too large')))
    assert type(exc) is OSError and exc.errno == errno.EFBIG
    assert str(exc) == "the file reached the session's file size limit of 64 MiB"
    limits(fsize=None)
    left = raised(OSError(errno.EFBIG, 'File too large'))
    assert refusals.explain(left) is left


def test_a_read_only_path_outside_the_session_gives_the_write_policy(session, limits):
    limits()
    for path in ('/usr/x', '/etc/x'):
        exc = refusals.explain(raised(OSError(errno.EROFS, 'Read-only file system', path)))
        assert type(exc) is OSError and exc.errno == errno.EROFS
        assert str(exc) == ('this sandbox can only write inside the session workspace'
                            ' (/s/workspace), TMPDIR (/s/tmp) and HOME (/s/config)')


def test_the_rewording_keeps_the_chain_and_the_notes(session, limits):
    limits()
    try:
        try:
            raise KeyError('first')
        except KeyError:
            raise PermissionError(errno.EACCES, 'Permission denied', '/srv/x')
    except PermissionError as e:
        e.add_note('a note')
        exc = refusals.explain(e)
    assert str(exc).startswith('this sandbox can only read the session directories')
    assert isinstance(exc.__context__, KeyError) and exc.__notes__ == ['a note']


@pytest.mark.parametrize('file, name, exc', [
    ('synchronize.py', '__init__', FileNotFoundError(errno.ENOENT, 'No such file or directory')),
    ('shared_memory.py', '__init__', FileNotFoundError(errno.ENOENT, 'No such file or directory')),
    ('popen_fork.py', '_launch', PermissionError(refusals._PROC)),
    ('util.py', 'spawnv_passfds', PermissionError(errno.EPERM, 'Operation not permitted')),
])
def test_multiprocessing_gets_the_process_policy_and_the_way_out(limits, file, name, exc):
    limits()
    new = refusals.explain(raised(exc, os.path.join(refusals._MP_DIR, file), name))
    assert type(new) is type(exc) and new.errno == exc.errno
    assert str(new) == refusals._POOL
    assert 'no new processes' in refusals.SHELL and 'ThreadPoolExecutor' in str(new)


def test_an_error_elsewhere_in_multiprocessing_or_of_its_name_stays(limits):
    limits()
    for exc in (raised(FileNotFoundError(2, 'x'), os.path.join(refusals._MP_DIR, 'pool.py'), '__init__'),
                raised(FileNotFoundError(2, 'x'), '/elsewhere/synchronize.py', '__init__'),
                raised(ValueError('x'), os.path.join(refusals._MP_DIR, 'synchronize.py'), '__init__')):
        assert refusals.explain(exc) is exc


def test_other_errors_and_interrupts_are_left_as_they_are(limits):
    limits(memory=1 << 30, fsize=1 << 20)
    for exc in (raised(KeyboardInterrupt()), raised(ZeroDivisionError('x')),
                raised(OSError(errno.EIO, 'I/O error'))):
        assert refusals.explain(exc) is exc


def test_sysconf_answers_the_sessions_memory_in_pages(limits):
    page = os.sysconf('SC_PAGE_SIZE')
    limits(memory=768 << 20)
    assert refusals.sysconf('SC_PHYS_PAGES') == (768 << 20) // page
    assert refusals.sysconf(os.sysconf_names['SC_PHYS_PAGES']) == (768 << 20) // page
    with open('/proc/self/statm') as f:
        used = int(f.read().split()[0])
    avail = refusals.sysconf('SC_AVPHYS_PAGES')
    assert 0 <= avail <= (768 << 20) // page - used + 1024  # the heap may have grown
    limits(memory=1 << 20)  # less than this process already uses
    assert refusals.sysconf('SC_AVPHYS_PAGES') == 0
    assert refusals.sysconf('SC_PAGE_SIZE') == page
    assert refusals.sysconf('SC_NPROCESSORS_ONLN') == os.sysconf('SC_NPROCESSORS_ONLN')
    limits(memory=None)
    assert refusals.sysconf('SC_PHYS_PAGES') == os.sysconf('SC_PHYS_PAGES')


@pytest.fixture
def modes(monkeypatch):
    monkeypatch.setattr(refusals, '_last_mode', [None])


def eperm(filename=None):
    return raised(PermissionError(errno.EPERM, 'Operation not permitted', filename))


def test_a_chmod_that_lets_others_in_names_the_policy(modes):
    refusals.audit('os.chmod', ('python3', 0o4755, None))
    exc = refusals.explain(eperm('python3'))
    assert type(exc) is PermissionError and exc.errno == errno.EPERM
    assert str(exc) == (
        'this sandbox keeps every file private to its owner: a mode set with chmod'
        ' may not give the group or others any access, nor set the setuid, setgid or sticky'
        ' bit (mode 0o4755 asked; a mode within 0o700 is allowed)')
    assert exc.__traceback__ is not None
    # By descriptor (os.chmod(fd), os.fchmod): no file name.
    refusals.audit('os.chmod', (3, 0o644, None))
    assert 'mode 0o644 asked' in str(refusals.explain(eperm()))


def test_a_mkdir_with_a_sticky_bit_names_the_policy(modes):
    refusals.audit('os.mkdir', ('shared', 0o1777, None))
    exc = refusals.explain(eperm('shared'))
    assert 'a new directory may not' in str(exc) and 'mode 0o1777 asked' in str(exc)


def test_refusals_of_allowed_modes_and_other_names_stay(modes, session):
    # A mode within 0o700 refused is the kernel's (not the owner), and
    # so is a mkdir with permission bits only (the umask takes them).
    f, d = '/s/workspace/f', '/s/workspace/d'
    refusals.audit('os.chmod', (f, 0o600, None))
    assert str(refusals.explain(eperm(f))) == f"[Errno 1] Operation not permitted: '{f}'"
    refusals.audit('os.mkdir', (d, 0o777, None))
    assert str(refusals.explain(eperm(d))) == f"[Errno 1] Operation not permitted: '{d}'"
    refusals.audit('os.chmod', (f, 0o755, None))
    assert str(refusals.explain(eperm(d))) == f"[Errno 1] Operation not permitted: '{d}'"
    exc = raised(PermissionError(errno.EACCES, 'Permission denied', f))
    assert refusals.explain(exc) is exc


def test_shutil_copies_a_mode_the_filter_refuses_with_the_owners_bits(tmp_path, monkeypatch):
    # The filter's refusal stood in for by a chmod that refuses any bit
    # but the owner's, as the seccomp rule does.
    real_chmod = os.chmod
    asked = []

    def filtered_chmod(path, mode, *, dir_fd=None, follow_symlinks=True):
        asked.append(mode)
        if mode & 0o7077:
            raise PermissionError(errno.EPERM, 'Operation not permitted', path)
        real_chmod(path, mode, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(os, 'chmod', filtered_chmod)
    src, dst = tmp_path / 'src', tmp_path / 'dst'
    src.write_text('x')
    real_chmod(src, 0o644)
    dst.write_text('y')
    real_chmod(dst, 0o600)
    for copy in (refusals._owner_bits(shutil.copymode), refusals._owner_bits(shutil.copystat)):
        asked.clear()
        real_chmod(dst, 0o400)
        copy(src, dst)
        assert asked == [0o644, 0o600]
        assert os.stat(dst).st_mode & 0o7777 == 0o600
    # A mode within the owner's bits is copied as it is, in one chmod.
    real_chmod(src, 0o500)
    asked.clear()
    refusals._owner_bits(shutil.copymode)(src, dst)
    assert asked == [0o500] and os.stat(dst).st_mode & 0o7777 == 0o500
    # Any other refusal is the cell's to see.
    real_chmod(src, 0o644)
    monkeypatch.setattr(os, 'chmod', lambda *a, **k: (_ for _ in ()).throw(
        PermissionError(errno.EACCES, 'Permission denied', str(dst))))
    with pytest.raises(PermissionError) as e:
        refusals._owner_bits(shutil.copymode)(src, dst)
    assert e.value.errno == errno.EACCES
    assert refusals._owner_bits(shutil.copystat).__name__ == 'copystat'


def test_umask_only_adds_to_077():
    before = os.umask(0o077)
    try:
        assert refusals.umask(0) == 0o077
        assert refusals.umask(0o022) == 0o077
        assert refusals.umask(0o177) == 0o077
        assert os.umask(0o077) == 0o177
    finally:
        os.umask(before)


def test_refusals_are_noted_once_counted_and_packed(session, monkeypatch):
    monkeypatch.setattr(refusals, '_noted', {})
    monkeypatch.setattr(refusals, '_left_out', [0])
    ci = refusals._ci
    for _ in range(3):
        refusals.audit('open', ('/etc/shadow', 'r', 0))
    refusals.audit('open', ('/s/workspace/data.csv', 'w', 0))  # the session's own
    refusals.audit('open', ('/dev/null', 'w', 0))
    refusals.audit('open', ('/usr/lib/python3/dist-packages/x.py', 'r', 0))
    refusals.audit('open', ('/usr/lib/x.py', None, os.O_WRONLY | os.O_CREAT))
    refusals.audit('os.listdir', ('/root',))
    # The hook never fails the call it notes: not for a cwd getcwd()
    # cannot name.
    def getcwd():
        raise PermissionError(errno.EACCES, 'Permission denied')
    with monkeypatch.context() as m:
        m.setattr(refusals.os, 'getcwd', getcwd)
        refusals.audit('os.mkdir', ('../deep', 0o777, None))
    with pytest.raises(PermissionError, match='network access is disabled'):
        refusals.audit('socket.getaddrinfo', ('example.com', 443, 0, 0, 0))
    with pytest.raises(PermissionError, match='symbolic links'):
        refusals.audit('os.symlink', ('/etc/passwd', 'link', None))
    refusals.note(ci.REFUSAL_PATH, 'read /' + 'x' * 600 + '\0')
    for i in range(ci.REFUSALS_MAX):
        refusals.note(ci.REFUSAL_SIGNAL, f'os.kill pid={i}')
    data = refusals.take()
    left_out, = struct.unpack_from('=I', data)
    at, got = 4, []
    while at < len(data):
        kind, times, n = struct.unpack_from('=III', data, at)
        got.append((kind, times, data[at + 12:at + 12 + n].decode()))
        at += 12 + n
    assert got[:5] == [(ci.REFUSAL_PATH, 3, 'read /etc/shadow'),
                       (ci.REFUSAL_PATH, 1, 'write /usr/lib/x.py'),
                       (ci.REFUSAL_PATH, 1, 'read /root'),
                       (ci.REFUSAL_NETWORK, 1, "socket.getaddrinfo 'example.com'"),
                       (ci.REFUSAL_SYMLINK, 1, "'link' -> '/etc/passwd'")]
    kind, times, detail = got[5]
    assert kind == ci.REFUSAL_PATH and len(detail.encode()) == ci.REFUSAL_DETAIL_MAX
    assert detail.endswith('...') and '\0' not in detail
    assert len(got) == ci.REFUSALS_MAX and left_out == 6
    assert refusals.take() is None
