"""Session and Result: the Python face of ci_session and ci_result."""

import ctypes
import enum
import os
import threading
from ctypes import byref, c_size_t, c_void_p, string_at
from typing import NamedTuple, Optional

from . import _lib
from ._lib import lib
from .errors import (BusyError, ErrorCode, InvalidArgumentError,
                     SessionClosedError, error_from_code)

STREAM_STDOUT = 1
STREAM_STDERR = 2
MAX_OUTPUTS = 10000
MAX_CELL_BYTES = 16 << 20

_C_ULONG_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_ulong))) - 1
_C_SIZE_MAX = (1 << (8 * ctypes.sizeof(c_size_t))) - 1
_C_UINT_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_uint))) - 1
_U64_MAX = (1 << 64) - 1


class Status(enum.Enum):
    """What happened to a cell (ci_status)."""

    OK = 0           # it ran to the end
    ERROR = 1        # it raised; see Result.error
    TIMEOUT = 2      # interrupted at the timeout; the session is intact
    MEMORY = 3       # MemoryError at the memory limit; the session is intact
    KILLED = 4       # the worker died; Session.restart() revives it
    INTERRUPTED = 5  # Session.interrupt() stopped it; the session is intact


class Sandbox(enum.IntFlag):
    """CI_SANDBOX_* layers, as Session.sandbox reports them.

    LANDLOCK and the namespaces (USERNS to PIDNS) are best effort: set only
    where the kernel allows them. PIDNS is a PID namespace of the worker's
    own, in which it is pid 1 (os.getpid() is 1 in a cell): only a worker
    forked from the zygote gets one, never a worker started by exec
    (zygote=False, or $CODEINTERP_WORKER set), so requiring PIDNS of such a
    session makes it fail with SandboxUnavailableError.
    """

    SECCOMP = 0x1
    RLIMITS = 0x2
    NO_NEW_PRIVS = 0x4
    LANDLOCK = 0x8
    UNPRIVILEGED = 0x10
    USERNS = 0x20
    NETNS = 0x40
    IPCNS = 0x80
    UTSNS = 0x100
    MNTNS = 0x200
    PIDNS = 0x400


class Truncated(enum.IntFlag):
    """CI_TRUNCATED_* bits of Result.truncated."""

    STDOUT = 0x1
    STDERR = 0x2
    TEXT = 0x4
    OUTPUTS = 0x8
    FILES = 0x10


class CellError(NamedTuple):
    """Why a cell did not succeed.

    name:      the exception's class name ("ZeroDivisionError"), or for a
               killed worker "WorkerDied", "SandboxViolation",
               "ProtocolError", "Timeout" or "Interrupted".
    value:     str(exception), or the sentence saying how the worker died.
    traceback: the formatted traceback with the cell's frames
               (File "<cell N>"), or None.
    """

    name: str
    value: str
    traceback: Optional[str]


class Output(NamedTuple):
    """One representation of one rich output (a figure, display(), HTML).

    mime:    "image/png", "text/html"...; "" for a clear_output.
    data:    the bytes (UTF-8 for text types); b"" for a clear_output.
    type:    "display_data", "execute_result", "update_display_data" or
             "clear_output" (Jupyter's output_type).
    message: which message of the run it belongs to, from 0; the
             representations of one message are consecutive, richest first.
    display_id: the message's display id (Jupyter's transient display_id):
             a display_data's when the cell asked for one, always an
             update_display_data's, naming the displays it replaces; else
             None.
    wait:    True for a clear_output(wait=True), which clears only when
             the next output comes; else False.
    """

    mime: str
    data: bytes
    type: str
    message: int
    display_id: Optional[str] = None
    wait: bool = False

    @property
    def text(self):
        """data decoded as UTF-8 (with replacement characters)."""
        return self.data.decode("utf-8", "replace")


_OUTPUT_TYPES = {1: "display_data", 2: "execute_result", 3: "update_display_data",
                 4: "clear_output"}


def _text(b):
    return None if b is None else b.decode("utf-8", "replace")


def _buffer(fn, r):
    n = c_size_t(0)
    p = fn(r, byref(n))
    return string_at(p, n.value) if p and n.value else b""


class Result:
    """Everything a run produced, copied out of the C result.

    Attributes: status (Status), ok (bool), stdout, stderr (str, UTF-8
    decoded with replacement), stdout_bytes, stderr_bytes (bytes as
    written), value (repr of the last expression, or None), error
    (CellError or None), outputs (list of Output), outputs_omitted (int),
    files (names of the workspace files created or modified, str decoded
    with os.fsdecode), truncated (Truncated flags), execution_count,
    wall_time_us, cpu_time_us, peak_memory (bytes).
    """

    __slots__ = ("status", "stdout_bytes", "stderr_bytes", "value", "error",
                 "outputs", "outputs_omitted", "files", "truncated",
                 "execution_count", "wall_time_us", "cpu_time_us",
                 "peak_memory")

    @classmethod
    def _from_c(cls, r):
        self = cls.__new__(cls)
        code = lib.ci_result_status(r)
        try:
            self.status = Status(code)
        except ValueError:  # a status appended after this binding
            self.status = code
        self.stdout_bytes = _buffer(lib.ci_result_stdout, r)
        self.stderr_bytes = _buffer(lib.ci_result_stderr, r)
        self.value = _text(lib.ci_result_value(r))
        name = lib.ci_result_error_name(r)
        if name is None:
            self.error = None
        else:
            self.error = CellError(_text(name),
                                   _text(lib.ci_result_error_value(r)) or "",
                                   _text(lib.ci_result_traceback(r)))
        outputs = []
        for i in range(lib.ci_result_output_count(r)):
            n = c_size_t(0)
            p = lib.ci_result_output_data(r, i, byref(n))
            otype = lib.ci_result_output_type(r, i)
            outputs.append(Output(
                (lib.ci_result_output_mime(r, i) or b"").decode("ascii", "replace"),
                string_at(p, n.value) if p and n.value else b"",
                _OUTPUT_TYPES.get(otype, "unknown(%d)" % otype),
                int(lib.ci_result_output_message(r, i)),
                _text(lib.ci_result_output_display_id(r, i)),
                bool(lib.ci_result_output_wait(r, i))))
        self.outputs = outputs
        self.outputs_omitted = int(lib.ci_result_outputs_omitted(r))
        self.files = [os.fsdecode(lib.ci_result_file_name(r, i))
                      for i in range(lib.ci_result_file_count(r))]
        self.truncated = Truncated(lib.ci_result_truncated(r))
        self.execution_count = int(lib.ci_result_execution_count(r))
        self.wall_time_us = int(lib.ci_result_wall_time_us(r))
        self.cpu_time_us = int(lib.ci_result_cpu_time_us(r))
        self.peak_memory = int(lib.ci_result_peak_memory(r))
        return self

    @property
    def ok(self):
        return self.status == Status.OK

    @property
    def stdout(self):
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self):
        return self.stderr_bytes.decode("utf-8", "replace")

    def __repr__(self):
        parts = ["status=%s" % getattr(self.status, "name", self.status),
                 "execution_count=%d" % self.execution_count]
        if self.value is not None:
            v = self.value if len(self.value) <= 60 else self.value[:57] + "..."
            parts.append("value=%r" % v)
        if self.error is not None:
            parts.append("error=%s" % self.error.name)
        if self.outputs:
            parts.append("outputs=%d" % len(self.outputs))
        if self.files:
            parts.append("files=%r" % self.files)
        return "<codeinterp.Result %s>" % " ".join(parts)


# ------------------------------------------------------------- arguments

def _uint(name, value, maximum):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    if value < 0 or value > maximum:
        raise InvalidArgumentError(ErrorCode.EINVAL, "invalid argument: %s=%d is out of range"
                                   % (name, value))
    return value


def _answer(on_input, prompt, password):
    """on_input's answer to the prompt as UTF-8 bytes, or None to refuse."""
    answer = on_input(prompt.decode("utf-8", "replace"), bool(password))
    if answer is None:
        return None
    if not isinstance(answer, str):
        raise TypeError("on_input must return a str or None, not %s" % type(answer).__name__)
    data = answer.encode("utf-8")
    if b"\0" in data:
        raise ValueError("on_input returned a str with a NUL character")
    return data


def _path_bytes(name, value):
    try:
        b = os.fsencode(value)
    except TypeError:
        raise TypeError("%s must be str, bytes or os.PathLike, not %s"
                        % (name, type(value).__name__)) from None
    if b"\0" in b:
        raise InvalidArgumentError(ErrorCode.EINVAL,
                                   "invalid argument: %s contains a NUL byte" % name)
    return b


def _preload_bytes(value):
    if not isinstance(value, str):
        raise TypeError("preload must be a str such as 'numpy,pandas', not %s"
                        % type(value).__name__)
    b = value.encode("utf-8")
    if b"\0" in b:
        raise InvalidArgumentError(ErrorCode.EINVAL,
                                   "invalid argument: preload contains a NUL byte")
    return b


def _key_bytes(value):
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError("public_key_bytes must be bytes (the 32 bytes of an Ed25519 "
                        "public key), not %s" % type(value).__name__)
    return bytes(value)


def _flag(name, value):
    if isinstance(value, bool):
        return int(value)
    return _uint(name, value, 1)


def _code_bytes(code):
    if isinstance(code, str):
        b = code.encode("utf-8")
    elif isinstance(code, (bytes, bytearray, memoryview)):
        b = bytes(code)
    else:
        raise TypeError("code must be str or bytes, not %s" % type(code).__name__)
    if b"\0" in b:
        # The C API takes a NUL-terminated string: refuse rather than cut.
        raise InvalidArgumentError(ErrorCode.EINVAL,
                                   "invalid argument: the cell contains a NUL byte")
    return b


def _check_config(rc, what):
    if rc != 0:
        raise error_from_code(rc, message="%s: %s" % (
            error_from_code(rc).message, what))


# --------------------------------------------------------------- session

class Session:
    """A sandboxed, stateful Python interpreter (one worker process).

        with codeinterp.Session(timeout_ms=10_000) as s:
            s.run("x = 6 * 7")
            print(s.run("x").value)          # 42

    Keyword arguments set the session's configuration (see the
    ci_config_set_* man pages); None keeps the library's default:

      timeout_ms          wall-clock limit of one run (default 30000)
      memory_limit        the worker's address-space limit in bytes (2 GiB)
      output_limit        bytes of stdout, and of stderr, kept per run (1 MiB)
      workspace_root      directory that holds the session directories ($TMPDIR)
      grace_ms            time an interrupted cell has before it is killed (2000)
      startup_timeout_ms  time the worker has to start (60000)
      file_limit          largest file a cell writes or put/get move (1 GiB)
      figure_dpi          resolution of matplotlib figures (100)
      display_limits      (per_output, per_run) bytes of rich outputs
      require_sandbox     Sandbox flags without which the session fails
                          (SandboxUnavailableError)
      preload             modules imported before the first cell: names joined
                          by ',' with no spaces ("numpy,pandas,matplotlib.pyplot";
                          matplotlib.pyplot is imported whatever it says)
      zygote              fork the worker from a zygote kept warm per preload
                          list (True), or start it by fork + exec (False:
                          never with a PID namespace, Sandbox.PIDNS)
      manifest            a signed package manifest (a path, made by
                          codeinterp-manifest(1)): the worker may import only
                          the packages it lists, and their files are checked
                          before any cell runs; it needs Sandbox.LANDLOCK.
                          Needs public_key or public_key_bytes
      public_key          the public key file that must have signed the
                          manifest (a path: the NAME.pub of
                          "codeinterp-manifest keygen NAME")
      public_key_bytes    that key as its 32 bytes (Ed25519), instead of a file

    A manifest that cannot be read, is malformed or badly signed, or does
    not match the installed files makes the session fail to start (and
    restart()) with ManifestError, whose detail names the cause; see
    ci_config_set_manifest(3) and SECURITY.md.

    Starting takes about 0.6 s for the first session of a preload list (or
    any with zygote=False), milliseconds for the next ones. A session
    belongs to one thread at a time: while a run is in progress every call
    but interrupt() raises BusyError.
    close() (or leaving the with block) kills the worker and removes the
    workspace; the object then refuses every call with SessionClosedError.
    """

    def __init__(self, timeout_ms=None, memory_limit=None, output_limit=None,
                 workspace_root=None, *, grace_ms=None, startup_timeout_ms=None,
                 file_limit=None, figure_dpi=None, display_limits=None,
                 require_sandbox=None, preload=None, zygote=None, manifest=None,
                 public_key=None, public_key_bytes=None):
        self._handle = None
        self._lock = threading.Lock()
        self._busy = None          # None, or the name of the call in progress
        self._pid = None
        self._sandbox = Sandbox(0)
        cfg = lib.ci_config_new()
        if not cfg:
            raise error_from_code(ErrorCode.ENOMEM)
        try:
            if timeout_ms is not None:
                _check_config(lib.ci_config_set_timeout_ms(
                    cfg, _uint("timeout_ms", timeout_ms, _C_ULONG_MAX)),
                    "timeout_ms=%r" % timeout_ms)
            if grace_ms is not None:
                _check_config(lib.ci_config_set_grace_ms(
                    cfg, _uint("grace_ms", grace_ms, _C_ULONG_MAX)),
                    "grace_ms=%r" % grace_ms)
            if startup_timeout_ms is not None:
                _check_config(lib.ci_config_set_startup_timeout_ms(
                    cfg, _uint("startup_timeout_ms", startup_timeout_ms, _C_ULONG_MAX)),
                    "startup_timeout_ms=%r" % startup_timeout_ms)
            if memory_limit is not None:
                _check_config(lib.ci_config_set_memory_limit(
                    cfg, _uint("memory_limit", memory_limit, _U64_MAX)),
                    "memory_limit=%r (at least 512 MiB)" % memory_limit)
            if output_limit is not None:
                _check_config(lib.ci_config_set_output_limit(
                    cfg, _uint("output_limit", output_limit, _C_SIZE_MAX)),
                    "output_limit=%r (1024 to 256 MiB)" % output_limit)
            if file_limit is not None:
                _check_config(lib.ci_config_set_file_limit(
                    cfg, _uint("file_limit", file_limit, _U64_MAX)),
                    "file_limit=%r" % file_limit)
            if figure_dpi is not None:
                _check_config(lib.ci_config_set_figure_dpi(
                    cfg, _uint("figure_dpi", figure_dpi, _C_UINT_MAX)),
                    "figure_dpi=%r (10 to 600)" % figure_dpi)
            if display_limits is not None:
                per_output, per_run = display_limits
                _check_config(lib.ci_config_set_display_limits(
                    cfg, _uint("display_limits[0]", per_output, _C_SIZE_MAX),
                    _uint("display_limits[1]", per_run, _C_SIZE_MAX)),
                    "display_limits=%r" % (display_limits,))
            if require_sandbox is not None:
                _check_config(lib.ci_config_require_sandbox(
                    cfg, _uint("require_sandbox", int(require_sandbox), _C_UINT_MAX)),
                    "require_sandbox=%r" % require_sandbox)
            if workspace_root is not None:
                _check_config(lib.ci_config_set_workspace_root(
                    cfg, _path_bytes("workspace_root", workspace_root)),
                    "workspace_root=%r (an absolute path)" % (workspace_root,))
            if preload is not None:
                _check_config(lib.ci_config_set_preload(cfg, _preload_bytes(preload)),
                              "preload=%r (module names joined by ',', no spaces)"
                              % (preload,))
            if zygote is not None:
                _check_config(lib.ci_config_set_zygote(cfg, _flag("zygote", zygote)),
                              "zygote=%r" % (zygote,))
            if manifest is not None:
                path = _path_bytes("manifest", manifest)
                if public_key is not None and public_key_bytes is not None:
                    raise InvalidArgumentError(
                        ErrorCode.EINVAL, "invalid argument: manifest=%r takes "
                        "public_key or public_key_bytes, not both" % (manifest,))
                if public_key_bytes is not None:
                    key = _key_bytes(public_key_bytes)
                    _check_config(lib.ci_config_set_manifest_key(cfg, path, key, len(key)),
                                  "manifest=%r, public_key_bytes of %d bytes (a path of "
                                  "at most 4096 bytes, and the 32 bytes of an Ed25519 "
                                  "public key)" % (manifest, len(key)))
                else:
                    key = None if public_key is None else _path_bytes("public_key", public_key)
                    _check_config(lib.ci_config_set_manifest(cfg, path, key),
                                  "manifest=%r, public_key=%r (two paths of at most "
                                  "4096 bytes; a manifest needs public_key or "
                                  "public_key_bytes)" % (manifest, public_key))
            elif public_key is not None or public_key_bytes is not None:
                raise InvalidArgumentError(
                    ErrorCode.EINVAL, "invalid argument: %s without manifest"
                    % ("public_key" if public_key is not None else "public_key_bytes"))
            handle = c_void_p()
            rc = lib.ci_session_new(byref(handle), cfg)
            if rc != 0:
                # The detail of a failed ci_session_new() is kept per thread.
                raise error_from_code(rc, _text(lib.ci_session_errmsg(None)))
        finally:
            lib.ci_config_free(cfg)
        self._handle = handle.value
        self._workspace = os.fsdecode(lib.ci_session_workspace(self._handle))
        self._refresh()

    # -- life cycle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self):
        return self._handle is None

    def close(self):
        """Kills the worker and removes the session directory. Idempotent.

        Raises BusyError if a run is in progress in another thread
        (interrupt() it first)."""
        with self._lock:
            if self._handle is None:
                return
            if self._busy is not None:
                raise BusyError(ErrorCode.EBUSY, "cannot close the session while %s() "
                                "is in progress on it" % self._busy)
            handle, self._handle = self._handle, None
            self._pid = None
            self._sandbox = Sandbox(0)
        lib.ci_session_free(handle)

    def __del__(self):
        # A safety net only: nothing else can hold this object, so no run
        # is in progress. Guard against interpreter shutdown.
        handle = getattr(self, "_handle", None)
        if handle is not None:
            self._handle = None
            try:
                lib.ci_session_free(handle)
            except Exception:
                pass

    def __repr__(self):
        if self._handle is None:
            return "<codeinterp.Session closed>"
        return "<codeinterp.Session pid=%s workspace=%r>" % (self._pid, self._workspace)

    # -- guarding the handle

    def _begin(self, op):
        with self._lock:
            if self._handle is None:
                raise SessionClosedError()
            if self._busy is not None:
                raise BusyError(ErrorCode.EBUSY, "%s() refused: %s() is in progress "
                                "on this session" % (op, self._busy))
            self._busy = op
            return self._handle

    def _end(self):
        with self._lock:
            self._busy = None

    def _error(self, rc, handle):
        """The exception for a failed call on @handle; call it before _end()."""
        return error_from_code(rc, _text(lib.ci_session_errmsg(handle)))

    def _refresh(self):
        """Caches pid and sandbox, for reading them while a run is in progress."""
        pid = lib.ci_session_pid(self._handle)
        self._pid = pid if pid > 0 else None
        self._sandbox = Sandbox(lib.ci_session_sandbox(self._handle))

    def _live_or_cached(self):
        with self._lock:
            if self._handle is None:
                raise SessionClosedError()
            if self._busy is None:
                self._refresh()
            return self._pid, self._sandbox

    # -- properties

    @property
    def workspace(self):
        """Absolute path of the workspace, the cells' working directory."""
        if self._handle is None:
            raise SessionClosedError()
        return self._workspace

    @property
    def pid(self):
        """The worker's process id, or None when the worker is dead."""
        return self._live_or_cached()[0]

    @property
    def sandbox(self):
        """The Sandbox layers the current worker applied (0 when dead)."""
        return self._live_or_cached()[1]

    # -- calls

    def run(self, code, timeout_ms=None, on_output=None, on_input=None):
        """Runs one cell and returns its Result.

        A cell that raises, times out, runs out of memory or kills its
        worker is not an exception here: the Result's status says so.
        Exceptions are for refused calls: DeadSessionError (restart() the
        session), BusyError, TooBigError (a cell over 16 MiB),
        SessionClosedError.

        timeout_ms: this run's wall-clock limit instead of the session's.
        on_output:  called as on_output(stream, data) while the cell runs,
                    stream STREAM_STDOUT (1) or STREAM_STDERR (2), data the
                    raw bytes (not cut on line or UTF-8 boundaries). It may
                    call interrupt(). If it raises, it is not called again,
                    the cell runs on (a KeyboardInterrupt interrupts it),
                    and run() raises that exception once the cell is over.
        on_input:   answers the cell's input() and getpass.getpass(), as a
                    Jupyter front end: called as on_input(prompt, password)
                    (password True for getpass), it returns the line as a
                    str (at most 1 MiB of UTF-8, no NUL), or None to refuse.
                    Without it, or when it refuses, input() raises
                    StdinNotImplementedError in the cell. The cell's timeout
                    runs on while it runs; it may call interrupt(). If it
                    raises, the input() is refused, neither callback is
                    called again, and run() raises that exception once the
                    cell is over (a KeyboardInterrupt also interrupts the
                    cell).
        """
        code_b = _code_bytes(code)
        if on_output is not None and not callable(on_output):
            raise TypeError("on_output must be callable")
        if on_input is not None and not callable(on_input):
            raise TypeError("on_input must be callable")
        opts = _lib.RunOptions()
        rc = lib.ci_run_options_init(byref(opts), _lib.CI_RUN_OPTIONS_VERSION)
        if rc != 0:
            raise error_from_code(rc)
        if timeout_ms is not None:
            _uint("timeout_ms", timeout_ms, _C_ULONG_MAX)
            if timeout_ms == 0:
                raise InvalidArgumentError(ErrorCode.EINVAL,
                                           "invalid argument: timeout_ms must be positive")
            opts.timeout_ms = timeout_ms

        failures = []
        callbacks = []  # referenced until ci_run_ex() returns
        out = c_void_p()
        handle = self._begin("run")

        def guarded(fn, *args):
            # Runs inside C: nothing may propagate out of it. None once
            # a callback has raised.
            if failures:
                return None
            try:
                return fn(*args)
            except BaseException as e:  # stored, re-raised below
                failures.append(e)
                if isinstance(e, KeyboardInterrupt):
                    lib.ci_session_interrupt(handle)
                return None

        try:
            if on_output is not None:
                def output_trampoline(stream, data, length, payload):
                    guarded(on_output, stream, string_at(data, length))
                callbacks.append(_lib.OUTPUT_FN(output_trampoline))
                opts.on_output = callbacks[-1]
            if on_input is not None:
                def input_trampoline(prompt, password, reply, payload):
                    answer = guarded(_answer, on_input, prompt, password)
                    if answer is None:
                        return -1
                    buf = _lib.malloc(len(answer) + 1)
                    if not buf:
                        return -1
                    ctypes.memmove(buf, answer, len(answer) + 1)
                    reply[0] = buf
                    return 0
                callbacks.append(_lib.INPUT_FN(input_trampoline))
                opts.on_input = callbacks[-1]
            rc = lib.ci_run_ex(handle, code_b, byref(opts), byref(out))
            if rc != 0:
                raise self._error(rc, handle)
            try:
                result = Result._from_c(out)
            finally:
                lib.ci_result_free(out)
            self._refresh()
        finally:
            self._end()
            callbacks = None
        if failures:
            raise failures[0]
        return result

    def interrupt(self):
        """Stops the cell running on this session (from any thread), as
        Jupyter's "interrupt kernel": the cell gets a KeyboardInterrupt and
        its Result has Status.INTERRUPTED. Returns True if a cell was
        running, False if none was (it never affects a later cell)."""
        with self._lock:
            if self._handle is None:
                raise SessionClosedError()
            if self._busy != "run":
                return False
            rc = lib.ci_session_interrupt(self._handle)
        if rc < 0:
            raise error_from_code(rc)
        return rc == 1

    def restart(self):
        """A fresh interpreter in the same workspace (files kept, state and
        execution count reset). Also revives a dead session. With a
        manifest, it is verified again first (ManifestError)."""
        handle = self._begin("restart")
        try:
            rc = lib.ci_session_restart(handle)
            if rc != 0:
                err = self._error(rc, handle)
                self._refresh()
                raise err
            self._refresh()
        finally:
            self._end()

    def put_file(self, name, data):
        """Writes @data (bytes-like) to @name in the workspace, atomically.
        @name is relative to the workspace ("/" separates existing
        directories); str names are encoded with os.fsencode."""
        name_b = _path_bytes("name", name)
        if isinstance(data, str):
            raise TypeError("data must be bytes-like, not str (encode it first)")
        if isinstance(data, bytes):
            buf, size = data, len(data)
        else:
            mv = memoryview(data)
            size = mv.nbytes
            if mv.readonly or not mv.c_contiguous:
                buf = mv.tobytes()
            else:
                buf = (ctypes.c_char * size).from_buffer(mv.cast("B")) if size else None
        handle = self._begin("put_file")
        try:
            rc = lib.ci_session_put_file(handle, name_b, buf, size)
            if rc != 0:
                raise self._error(rc, handle)
        finally:
            self._end()
            buf = None

    def get_file(self, name):
        """The whole file @name of the workspace, as bytes."""
        name_b = _path_bytes("name", name)
        data = c_void_p()
        size = c_size_t(0)
        handle = self._begin("get_file")
        try:
            rc = lib.ci_session_get_file(handle, name_b, byref(data), byref(size))
            if rc != 0:
                raise self._error(rc, handle)
            try:
                return string_at(data, size.value) if size.value else b""
            finally:
                lib.ci_free(data)
        finally:
            self._end()


def version():
    """ci_version(): the version of the loaded C library, "0.1.0"."""
    return lib.ci_version().decode("ascii")
