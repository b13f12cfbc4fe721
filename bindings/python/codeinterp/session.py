"""Session and Result: the Python face of ci_session and ci_result."""

from __future__ import annotations

import asyncio
import ctypes
import enum
import inspect
import json
import os
import threading
from ctypes import byref, c_size_t, c_void_p, string_at
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, NamedTuple,
                    Optional, Sequence, Tuple, Type, TypeVar, Union)

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer   # bytes, bytearray, memoryview, array...

from . import _lib
from ._lib import lib
from .errors import (BusyError, CodeinterpError, ErrorCode, InvalidArgumentError,
                     SessionClosedError, error_from_code)

STREAM_STDOUT = 1
STREAM_STDERR = 2
MAX_OUTPUTS = 10000
MAX_CELL_BYTES = 16 << 20

_C_ULONG_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_ulong))) - 1
_C_SIZE_MAX = (1 << (8 * ctypes.sizeof(c_size_t))) - 1
_C_UINT_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_uint))) - 1
_U64_MAX = (1 << 64) - 1

#: What Session.run() takes as on_output: called as on_output(stream, data),
#: stream STREAM_STDOUT or STREAM_STDERR, data raw bytes; its return value
#: is ignored.
OutputCallback = Callable[[int, bytes], object]
#: What Session.run() takes as on_input: called as on_input(prompt,
#: password), it returns the line (a str) or None to refuse.
InputCallback = Callable[[str, bool], Optional[str]]
#: What Session.put_file() and get_file() take as a workspace file name,
#: and Session() as a path.
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


class Status(enum.Enum):
    """What happened to a cell (ci_status)."""

    OK = 0           # it ran to the end
    ERROR = 1        # it raised; see Result.error
    TIMEOUT = 2      # interrupted at the timeout; the session is intact
    MEMORY = 3       # MemoryError at the memory limit; the session is intact
    KILLED = 4       # the worker died; Session.restart() revives it
    INTERRUPTED = 5  # Session.interrupt() stopped it; the session is intact

    def __str__(self) -> str:
        """The status's one-word name, as ci_status_name() gives it: "ok",
        "error", "timeout", "memory", "killed" or "interrupted"."""
        name: bytes = lib.ci_status_name(self.value)
        return name.decode("ascii", "replace")


def _flag_names(flags: enum.IntFlag) -> str:
    """The names of the bits set in @flags, in lower case, joined by "|"
    ("seccomp|landlock"); "none" for no bit, a bit the class does not
    know in hex ("0x800")."""
    value = int(flags)
    names: List[str] = []
    for member in type(flags):
        if value & member.value:
            names.append(str(member.name).lower())
            value &= ~member.value
    if value:
        names.append(hex(value))
    return "|".join(names) or "none"


class Sandbox(enum.IntFlag):
    """CI_SANDBOX_* layers, as Session.sandbox reports them.

    LANDLOCK and the namespaces (USERNS to PIDNS) are best effort: set only
    where the kernel allows them. PIDNS is a PID namespace of the worker's
    own, in which it is pid 1 (os.getpid() is 1 in a cell): only a worker
    forked from the zygote gets one, never a worker started by exec
    (zygote=False, or $CODEINTERP_WORKER set), so requiring PIDNS of such a
    session makes it fail with SandboxUnavailableError. TASK_LIMIT, the
    task limit (RLIMIT_NPROC counted in the worker's user namespace), is
    set only with USERNS; DISK_QUOTA, the session directory as a tmpfs of
    the disk and inode quotas, only where the host may mount (root).

    str() names the layers as the CI_SANDBOX_* bits do, in lower case:
    "seccomp|rlimits|no_new_privs|landlock|unprivileged|userns|netns|ipcns|
    utsns|mntns|pidns|task_limit|disk_quota"; "none" for no layer.
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
    TASK_LIMIT = 0x800
    DISK_QUOTA = 0x1000

    __str__ = _flag_names


_ALL_LAYERS = Sandbox(sum(layer.value for layer in Sandbox))


class Truncated(enum.IntFlag):
    """CI_TRUNCATED_* bits of Result.truncated; str() names them:
    "stdout|stderr|text|outputs|files", "none"."""

    STDOUT = 0x1
    STDERR = 0x2
    TEXT = 0x4
    OUTPUTS = 0x8
    FILES = 0x10

    __str__ = _flag_names


class CellError(NamedTuple):
    """Why a cell did not succeed.

    name:      the exception's class name ("ZeroDivisionError"), or for a
               killed worker "WorkerDied", "SandboxViolation",
               "CPULimitExceeded" (the kernel killed it at the CPU
               limit), "ProtocolError", "TimeoutError" (it did not stop within the
               grace period after the timeout) or "KeyboardInterrupt" (nor
               after Session.interrupt()): one name per fate, whether the
               cell stopped or was killed, the status telling which.
    value:     str(exception), or the sentence saying how the worker died.
    traceback: the formatted traceback with the cell's frames
               (File "<cell N>"), or None. Between the cell's frames and
               the frame that raised, each run of other code's frames (the
               standard library's, a package's) is folded into one line
               that counts them and names their files:
                   ... 7 frames in urllib/request.py, http/client.py ...
    traceback_full: the same traceback with nothing folded (every frame
               but the worker's); equal to traceback when nothing was
               folded, None exactly when traceback is.
    """

    name: str
    value: str
    traceback: Optional[str]
    traceback_full: Optional[str] = None


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
    def text(self) -> str:
        """data decoded as UTF-8 (with replacement characters)."""
        return self.data.decode("utf-8", "replace")


_OUTPUT_TYPES = {1: "display_data", 2: "execute_result", 3: "update_display_data",
                 4: "clear_output"}


def _text(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else b.decode("utf-8", "replace")


def _buffer(fn: Any, r: Any) -> bytes:
    n = c_size_t(0)
    p = fn(r, byref(n))
    return string_at(p, n.value) if p and n.value else b""


class Result:
    """Everything a run produced, copied out of the C result.

    Attributes: status (Status), ok (bool), stdout, stderr (str, UTF-8
    decoded with replacement), stdout_bytes, stderr_bytes (bytes as
    written; a stream that passed the output limit as its head, one
    marker line and its tail:
        [... 5905 bytes (0 lines) left out: stdout passed the output limit
        of 4 KiB; the whole output is in .outputs/cell-1.stdout ...]
    and spill_file(stream) names the file holding all of it), value (repr
    of the last expression, or None), error
    (CellError or None), outputs (list of Output), outputs_omitted (int),
    files (names of the workspace files created or modified, str decoded
    with os.fsdecode), truncated (Truncated flags), rolled_back (bool:
    the cell killed the worker, Status.KILLED, and the session went back
    to its state just before the cell; see Session's rollback),
    execution_count, wall_time_us, cpu_time_us, peak_memory (bytes).
    """

    __slots__ = ("status", "stdout_bytes", "stderr_bytes", "value", "error",
                 "outputs", "outputs_omitted", "files", "truncated",
                 "rolled_back", "execution_count", "wall_time_us", "cpu_time_us",
                 "peak_memory", "_spill")

    status: Union[Status, int]   # an int only for a status newer than this binding
    stdout_bytes: bytes
    stderr_bytes: bytes
    value: Optional[str]
    error: Optional[CellError]
    outputs: List[Output]
    outputs_omitted: int
    files: List[str]
    truncated: Truncated
    rolled_back: bool
    execution_count: int
    wall_time_us: int
    cpu_time_us: int
    peak_memory: int
    _spill: Dict[int, Optional[str]]

    @classmethod
    def _from_c(cls, r: Any) -> Result:
        self = cls.__new__(cls)
        code = lib.ci_result_status(r)
        try:
            self.status = Status(code)
        except ValueError:  # a status appended after this binding
            self.status = int(code)
        self.stdout_bytes = _buffer(lib.ci_result_stdout, r)
        self.stderr_bytes = _buffer(lib.ci_result_stderr, r)
        self.value = _text(lib.ci_result_value(r))
        name = lib.ci_result_error_name(r)
        if name is None:
            self.error = None
        else:
            self.error = CellError(_text(name) or "",
                                   _text(lib.ci_result_error_value(r)) or "",
                                   _text(lib.ci_result_traceback(r)),
                                   _text(lib.ci_result_traceback_full(r)))
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
        self.rolled_back = bool(lib.ci_result_rolled_back(r))
        self._spill = {stream: _text(lib.ci_result_spill_file(r, stream, None))
                       for stream in (STREAM_STDOUT, STREAM_STDERR)}
        self.execution_count = int(lib.ci_result_execution_count(r))
        self.wall_time_us = int(lib.ci_result_wall_time_us(r))
        self.cpu_time_us = int(lib.ci_result_cpu_time_us(r))
        self.peak_memory = int(lib.ci_result_peak_memory(r))
        return self

    @property
    def ok(self) -> bool:
        """True when the status is Status.OK."""
        return self.status == Status.OK

    @property
    def stdout(self) -> str:
        """stdout_bytes decoded as UTF-8 (with replacement characters)."""
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        """stderr_bytes decoded as UTF-8 (with replacement characters)."""
        return self.stderr_bytes.decode("utf-8", "replace")

    def spill_file(self, stream: int) -> Optional[str]:
        """The workspace-relative name of the file that holds the whole of
        @stream (STREAM_STDOUT or STREAM_STDERR) when it passed the output
        limit, ".outputs/cell-12.stdout" (cell 12's stdout), for
        Session.get_file() or the next cell; None when the stream was not
        cut, spill files are off (spill_limit=0) or the file could not be
        written (the marker line in the stream says why)."""
        if stream not in self._spill:
            raise ValueError("Result.spill_file(): stream must be STREAM_STDOUT (1) or "
                             "STREAM_STDERR (2), not %r" % (stream,))
        return self._spill[stream]

    def __repr__(self) -> str:
        parts = ["status=%s" % self.status,
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
        if self.rolled_back:
            parts.append("rolled_back")
        return "<codeinterp.Result %s>" % " ".join(parts)


# ------------------------------------------------------------- arguments
# Each check names the call (@op, "Session.run()") and the argument, and
# says what the library takes, in Python's terms.

_NEW = "Session()"
_RESTORE = "Session.restore()"
_NAME_RULE = ('a name is a path relative to the workspace, without empty, "." or ".." '
              'components')
_MAX_NAME_BYTES = 4095    # PATH_MAX - 1
_MAX_RUN_TIMEOUT_MS = 86_400_000


def _op(call: str) -> str:
    return "Session.%s()" % call


def _invalid(op: str, what: str) -> InvalidArgumentError:
    """The InvalidArgumentError of @op, @what saying what was wrong."""
    return InvalidArgumentError(ErrorCode.EINVAL, detail=what, op=op)


def _shown(value: object) -> str:
    """@value as a message shows it: its repr, cut to 100 characters."""
    if isinstance(value, (str, bytes)) and len(value) > 100:
        return "%r... (%d long)" % (value[:100], len(value))
    return repr(value)


def _uint(op: str, name: str, value: object, maximum: int, want: Optional[str] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s: %s must be an int, not %s" % (op, name, type(value).__name__))
    if value < 0 or value > maximum:
        raise _invalid(op, "%s=%d refused: must be %s" % (name, value,
                                                           want or "0 to %d" % maximum))
    return value


def _answer(on_input: InputCallback, prompt: bytes, password: int) -> Optional[bytes]:
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


def _path_bytes(op: str, name: str, value: object) -> bytes:
    try:
        b = os.fsencode(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError("%s: %s must be str, bytes or os.PathLike, not %s"
                        % (op, name, type(value).__name__)) from None
    if b"\0" in b:
        raise _invalid(op, "%s %s holds a NUL byte at offset %d"
                       % (name, _shown(os.fsdecode(b)), b.index(b"\0")))
    return b


def _name_problem(b: bytes) -> Optional[str]:
    """What is wrong with the workspace file name @b, or None."""
    if not b:
        return "is empty"
    if len(b) > _MAX_NAME_BYTES:
        return "is over %d bytes" % _MAX_NAME_BYTES
    if b.startswith(b"/"):
        return "is absolute"
    for part in b.split(b"/"):
        if not part:
            return 'has an empty component ("//" or a trailing "/")'
        if part in (b".", b".."):
            return 'has a "%s" component' % part.decode()
    return None


def _name_bytes(op: str, value: object) -> bytes:
    """A workspace file name as the library takes it, checked by the
    library's rule before the call, so that the error can say what is
    wrong with it."""
    b = _path_bytes(op, "name", value)
    problem = _name_problem(b)
    if problem:
        raise _invalid(op, "name %s %s: %s" % (_shown(os.fsdecode(b)), problem, _NAME_RULE))
    return b


def _preload_bytes(value: object) -> bytes:
    if not isinstance(value, str):
        raise TypeError("%s: preload must be a str such as 'numpy,pandas', not %s"
                        % (_NEW, type(value).__name__))
    b = value.encode("utf-8")
    if b"\0" in b:
        raise _invalid(_NEW, "preload=%s holds a NUL byte" % _shown(value))
    return b


def _text_arg(name: str, value: object) -> bytes:
    """@value, a str, as the library takes it: UTF-8 without NUL."""
    if not isinstance(value, str):
        raise TypeError("%s: %s must be a str, not %s" % (_NEW, name, type(value).__name__))
    b = value.encode("utf-8", "surrogateescape")
    if b"\0" in b:
        raise _invalid(_NEW, "%s holds a NUL byte" % name)
    return b


def _add_urls(cfg: int, urls: object) -> None:
    """ci_config_allow_url() for each prefix of @urls (an iterable of str,
    or a mapping of each to its headers), and ci_config_set_url_header()
    for each header. A header's value is never shown in a message."""
    items = urls.items() if isinstance(urls, Mapping) else ((p, ()) for p in urls)  # type: ignore
    for prefix, headers in items:
        p = _text_arg("allow_urls", prefix)
        _check_config(lib.ci_config_allow_url(cfg, p), "allow_urls: %s" % _shown(prefix),
                      "an http or https URL without userinfo, query or fragment "
                      "(scheme, host, port and path: 'https://api.example.com/v1/')")
        if isinstance(headers, str):
            raise TypeError("%s: allow_urls[%r] must be a sequence of headers, not a str"
                            % (_NEW, prefix))
        for i, header in enumerate(headers):
            _check_config(lib.ci_config_set_url_header(
                cfg, p, _text_arg("allow_urls[%r][%d]" % (prefix, i), header)),
                "allow_urls[%r][%d]" % (prefix, i),
                "one 'Name: value' line of at most 8192 bytes, without CR, LF or NUL")


def _key_bytes(value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError("%s: public_key_bytes must be bytes (the 32 bytes of an Ed25519 "
                        "public key), not %s" % (_NEW, type(value).__name__))
    return bytes(value)


def _flag(name: str, value: object) -> int:
    if isinstance(value, bool):
        return int(value)
    return _uint(_NEW, name, value, 1, "True or False")


def _code_bytes(op: str, code: object) -> bytes:
    if isinstance(code, str):
        b = code.encode("utf-8")
    elif isinstance(code, (bytes, bytearray, memoryview)):
        b = bytes(code)
    else:
        raise TypeError("%s: code must be str or bytes, not %s" % (op, type(code).__name__))
    if b"\0" in b:
        # The C API takes a NUL-terminated string: refuse rather than cut.
        raise _invalid(op, "code holds a NUL byte at offset %d: the cell is passed to C "
                       "as a string" % b.index(b"\0"))
    if len(b) > MAX_CELL_BYTES:
        raise error_from_code(ErrorCode.ETOOBIG, "code of %d bytes is over the limit of a "
                              "cell, 16 MiB (%d bytes)" % (len(b), MAX_CELL_BYTES), op=op)
    return b


#: What Session() takes as a host function: any callable, called with the
#: cell's arguments decoded from JSON; its value is encoded back.
HostFunction = Callable[..., Any]

_FUNCTION_NAME_WANT = ("an ASCII Python identifier of at most 64 bytes, not a keyword or a "
                       "builtin, not starting with '_', given once; a description (the "
                       "docstring) of at most 65536 bytes; at most 256 functions")
_MESSAGE_MAX = 65536  # ci_reply_error's message, in bytes


def _message(e: BaseException) -> bytes:
    """@e's message as ci_reply_error() takes it: UTF-8, no NUL, at most
    64 KiB, cut on a character boundary. The message of an exception made
    of one str is that str (str(KeyError('x')) would quote it again)."""
    try:
        text = e.args[0] if len(e.args) == 1 and isinstance(e.args[0], str) else str(e)
    except Exception:
        text = "<str() of the exception failed>"
    b = text.replace("\0", "\\0").encode("utf-8", "replace")
    return b[:_MESSAGE_MAX].decode("utf-8", "ignore").encode("utf-8")


class _Functions:
    """The host functions of one Session and the one C callback that runs
    them. It holds no reference to the Session: a KeyboardInterrupt (or
    another BaseException that is not an Exception) a function raises is
    kept in pending, the cell interrupted through handle, and run() raises
    it once the cell is over."""

    def __init__(self, functions: Dict[str, HostFunction]) -> None:
        self.functions = functions
        self.pending: List[BaseException] = []
        self.handle: Optional[int] = None
        self.callback = _lib.FUNCTION_FN(self._call)

    def _call(self, payload: Optional[int], name: bytes, args: int, length: int,
              reply: int) -> None:
        # Runs inside C: nothing may propagate out of it.
        try:
            fn = self.functions[name.decode("ascii")]
            call = json.loads(string_at(args, length).decode("utf-8"))
            value = fn(*call["args"], **call["kwargs"])
            try:
                data = json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
            except (TypeError, ValueError) as e:
                raise TypeError("the host function %s() returned a value that is not JSON: "
                                "%s" % (name.decode("ascii"), e)) from None
            if lib.ci_reply_json(reply, data, len(data)) != 0:
                raise ValueError(_text(lib.ci_session_errmsg(self.handle)))
        except Exception as e:
            lib.ci_reply_error(reply, type(e).__name__.encode("ascii", "replace"), _message(e))
        except BaseException as e:  # KeyboardInterrupt: the host's own, re-raised by run()
            self.pending.append(e)
            if self.handle is not None:
                lib.ci_session_interrupt(self.handle)
            lib.ci_reply_error(reply, type(e).__name__.encode("ascii", "replace"), _message(e))

    def add_to(self, cfg: int) -> None:
        for name, fn in self.functions.items():
            if not isinstance(name, str):
                raise TypeError("%s: a host function's name must be a str, not %s"
                                % (_NEW, type(name).__name__))
            if not callable(fn):
                raise TypeError("%s: functions[%r] must be callable" % (_NEW, name))
            doc = inspect.getdoc(fn)
            _check_config(lib.ci_config_add_function(
                cfg, name.encode("utf-8"), doc.encode("utf-8", "replace") if doc else None,
                self.callback, None), "functions[%s]" % _shown(name), _FUNCTION_NAME_WANT)

    def take_pending(self) -> None:
        if self.pending:
            e = self.pending[0]
            self.pending.clear()
            raise e


def _event_callback(on_event: Optional[Callable[[str], None]]) -> Any:
    """The C callback that gives @on_event each audit line (None: none).
    It runs inside C: an exception becomes the failed write the library
    reports (ci_event_fn returns -1)."""
    if on_event is None:
        return None
    if not callable(on_event):
        raise TypeError("%s: on_event must be callable" % _NEW)
    take: Callable[[str], None] = on_event

    def call(line: int, length: int, payload: Optional[int]) -> int:
        try:
            take(string_at(line, length).decode("utf-8"))
            return 0
        except BaseException:
            return -1
    return _lib.EVENT_FN(call)


def _check_config(rc: int, arg: str, want: str) -> None:
    """Raises the error of a setting the library refused: @arg as given
    ("timeout_ms=0"), @want what the library takes."""
    if rc != 0:
        what = "%s refused: must be %s" % (arg, want) if rc == ErrorCode.EINVAL else arg
        raise error_from_code(rc, what, op=_NEW)


# --------------------------------------------------------------- session

_S = TypeVar("_S", bound="Session")

class Session:
    """A sandboxed, stateful Python interpreter (one worker process).

        with codeinterp.Session(timeout_ms=10_000) as s:
            s.run("x = 6 * 7")
            print(s.run("x").value)          # 42

    Keyword arguments set the session's configuration (see the
    ci_config_set_* man pages); None keeps the library's default:

      timeout_ms          wall-clock limit of one run (default 30000)
      memory_limit        the worker's address-space limit in bytes (2 GiB)
      output_limit        bytes of stdout, and of stderr, kept per run (1 MiB):
                          a stream past it keeps its head and its tail, with
                          a marker line between them saying what was left out
                          and where the whole stream is (Result.spill_file)
      spill_limit         the largest spill file, in bytes (16 MiB); 0 keeps
                          none. A stream past the output limit is written
                          whole, up to this, to .outputs/cell-N.stdout (or
                          .stderr) in the workspace; a session keeps the
                          spill files of its last 8 cut streams
      workspace_root      directory that holds the session directories ($TMPDIR)
      grace_ms            time an interrupted cell has before it is killed (2000)
      startup_timeout_ms  time the worker has to start (60000)
      file_limit          largest file a cell writes or put/get move (1 GiB)
      task_limit          most processes and threads a worker has at once
                          (256); past it a cell's thread fails to start
                          (Sandbox.TASK_LIMIT, which needs Sandbox.USERNS)
      disk_quota          most bytes the session's directory holds (512 MiB;
                          0: none), as a tmpfs of its own the host mounts
                          (Sandbox.DISK_QUOTA: root only); past it a cell
                          gets OSError ENOSPC and put_file() TooBigError
      inode_quota         most files and directories in it (65536)
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
      rollback            a cell that kills the worker (its grace period ran
                          out, a crash, a sandbox violation, os._exit) still
                          returns Status.KILLED with its error, but with
                          Result.rolled_back True: the session lives on with
                          its state as just before that cell (its files as
                          the cell left them), and the next run() works at
                          once (True); or it is dead until restart() (False,
                          the default). Before each cell the worker forks a
                          copy-on-write checkpoint (about 10 ms a cell for 100 MB).
                          It needs a worker forked from the zygote (a PID
                          namespace, Sandbox.PIDNS); without one the session
                          starts without it and rollback_active is False.
                          See ci_config_set_rollback(3)
      manifest            a signed package manifest (a path, made by
                          codeinterp-manifest(1)): the worker may import only
                          the packages it lists, and their files are checked
                          before any cell runs; it needs Sandbox.LANDLOCK.
                          Needs public_key or public_key_bytes
      public_key          the public key file that must have signed the
                          manifest (a path: the NAME.pub of
                          "codeinterp-manifest keygen NAME")
      public_key_bytes    that key as its 32 bytes (Ed25519), instead of a file
      wheelhouse          a directory of wheel files (a path) that cells may
                          install from with %pip install NAME, !pip install
                          NAME or pip.main(["install", NAME]): only the wheels
                          the manifest lists, each checked against its SHA-256
                          ("codeinterp-manifest create ... --wheelhouse DIR"
                          lists them), into the session's own site directory.
                          Needs manifest; None: no installs. See
                          ci_config_set_wheelhouse(3) and docs/wheelhouse.md
      functions           host functions, {name: callable}: each a builtin of
                          the cells (and importable from codeinterp_host),
                          whose docstring is the callable's. A cell's call
                          runs the callable here, on the thread in run(),
                          with the arguments decoded from JSON; its value
                          (JSON: None, bool, int, float, str, list, dict)
                          is what the call returns, and an exception it
                          raises is raised in the cell (a builtin one as
                          itself, any other as HostFunctionError with its
                          name and message). A KeyboardInterrupt in it
                          interrupts the cell and run() raises it after.
                          See ci_config_add_function(3)
      call_limits         (args_bytes, result_bytes) of a call's JSON
                          (1 MiB each)
      allow_urls          the URL prefixes a cell may fetch with urllib,
                          requests or pandas, the host making each request:
                          ['https://api.example.com/v1/'], or a mapping of
                          each prefix to the headers the host adds to its
                          requests, never shown to the cell
                          ({'https://api.example.com/v1/':
                          ['Authorization: Bearer ...']}). None or empty: no
                          network. See ci_config_allow_url(3)
      url_limits          (request_bytes, response_bytes, timeout_ms) of one
                          request by URL (16 MiB, 16 MiB, 30000)
      audit_log           a file (a path) the host appends one JSON line to
                          for each event of the session: its start, each
                          cell (SHA-256, status, times, changed files), each
                          put_file and get_file, each host function call,
                          each refusal (a system call, a path, a socket),
                          restarts, kills, its end; each line chained to the one before by
                          SHA-256 (codeinterp-audit verify checks it;
                          docs/audit-log.md is the schema). See
                          ci_config_set_audit_log(3)
      on_event            a callable given each event's line (a str) as the
                          log gets it, on the thread of the call that made
                          it; an exception it raises counts as a failed
                          write. It must not use this session

    The audit log fails closed: a start it cannot record raises
    WorkspaceIOError (CI_EIO) naming the file; after another event it could
    not record, run(), put_file() and get_file() raise WorkspaceIOError
    until a restart() is recorded (a run whose end was not recorded still
    returns its Result).

    A manifest that cannot be read, is malformed or badly signed, or does
    not match the installed files makes the session fail to start (and
    restart()) with ManifestError, whose detail names the cause; see
    ci_config_set_manifest(3) and SECURITY.md. So does a wheelhouse without
    a manifest, or one that is not a directory.

    Starting takes about 0.6 s for the first session of a preload list (or
    any with zygote=False), milliseconds for the next ones. A session
    belongs to one thread at a time: while a run is in progress every call
    but interrupt() raises BusyError.
    close() (or leaving the with block) kills the worker and removes the
    workspace; the object then refuses every call with SessionClosedError.
    """

    # Set only while restore() runs __init__: the snapshot to start from.
    _restore_from: Optional[bytes] = None

    def __init__(self, timeout_ms: Optional[int] = None, memory_limit: Optional[int] = None,
                 output_limit: Optional[int] = None, workspace_root: Optional[PathLike] = None,
                 *, spill_limit: Optional[int] = None, grace_ms: Optional[int] = None,
                 startup_timeout_ms: Optional[int] = None, file_limit: Optional[int] = None,
                 task_limit: Optional[int] = None, disk_quota: Optional[int] = None,
                 inode_quota: Optional[int] = None,
                 figure_dpi: Optional[int] = None,
                 display_limits: Optional[Tuple[int, int]] = None,
                 require_sandbox: Optional[int] = None, preload: Optional[str] = None,
                 zygote: Optional[bool] = None, rollback: Optional[bool] = None,
                 manifest: Optional[PathLike] = None,
                 public_key: Optional[PathLike] = None,
                 public_key_bytes: Optional[bytes] = None,
                 wheelhouse: Optional[PathLike] = None,
                 functions: Optional[Mapping[str, HostFunction]] = None,
                 call_limits: Optional[Tuple[int, int]] = None,
                 allow_urls: Optional[Union[Iterable[str], Mapping[str, Sequence[str]]]] = None,
                 url_limits: Optional[Tuple[int, int, int]] = None,
                 audit_log: Optional[PathLike] = None,
                 on_event: Optional[Callable[[str], None]] = None) -> None:
        # Every argument, for fork()'s branch (locals() holds only them here).
        self._options: Dict[str, Any] = {k: v for k, v in locals().items() if k != "self"}
        self._handle: Optional[int] = None
        # Kept as long as the session: its C callback is the library's.
        self._functions = _Functions(dict(functions or {}))
        self._on_event = _event_callback(on_event)
        self._lock = threading.Lock()
        self._busy: Optional[str] = None   # None, or the name of the call in progress
        self._pid: Optional[int] = None
        self._sandbox = Sandbox(0)
        self._rollback_active = False
        cfg = lib.ci_config_new()
        if not cfg:
            raise error_from_code(ErrorCode.ENOMEM, op=_NEW)
        try:
            # keyword, value, setter, C maximum, what the library takes
            numbers = (
                ("timeout_ms", timeout_ms, lib.ci_config_set_timeout_ms, _C_ULONG_MAX,
                 "1 to 86400000 (24 h)"),
                ("grace_ms", grace_ms, lib.ci_config_set_grace_ms, _C_ULONG_MAX,
                 "1 to 600000 (10 min)"),
                ("startup_timeout_ms", startup_timeout_ms, lib.ci_config_set_startup_timeout_ms,
                 _C_ULONG_MAX, "1 to 600000 (10 min)"),
                ("memory_limit", memory_limit, lib.ci_config_set_memory_limit, _U64_MAX,
                 "512 MiB (536870912) to 2**63-1 bytes"),
                ("output_limit", output_limit, lib.ci_config_set_output_limit, _C_SIZE_MAX,
                 "1024 bytes to 256 MiB (268435456)"),
                ("spill_limit", spill_limit, lib.ci_config_set_spill_limit, _U64_MAX,
                 "0 (no spill files), or 1024 bytes to 4 GiB (4294967296)"),
                ("file_limit", file_limit, lib.ci_config_set_file_limit, _U64_MAX,
                 "1 to 2**63-1 bytes"),
                ("figure_dpi", figure_dpi, lib.ci_config_set_figure_dpi, _C_UINT_MAX,
                 "10 to 600"),
                ("task_limit", task_limit, lib.ci_config_set_task_limit, _C_ULONG_MAX,
                 "16 to 65536 tasks"),
                ("disk_quota", disk_quota, lib.ci_config_set_disk_quota, _U64_MAX,
                 "0 (none), or 1 MiB (1048576) to 2**63-1 bytes"),
                ("inode_quota", inode_quota, lib.ci_config_set_inode_quota, _U64_MAX,
                 "64 to 4294967295 inodes"),
            )
            for name, value, setter, maximum, want in numbers:
                if value is not None:
                    _check_config(setter(cfg, _uint(_NEW, name, value, maximum, want)),
                                  "%s=%r" % (name, value), want)
            if display_limits is not None:
                per_output, per_run = display_limits
                want = "(per_output, per_run): per_output at least 1024, per_run from " \
                       "per_output to 1 GiB (1073741824)"
                _check_config(lib.ci_config_set_display_limits(
                    cfg, _uint(_NEW, "display_limits[0]", per_output, _C_SIZE_MAX, want),
                    _uint(_NEW, "display_limits[1]", per_run, _C_SIZE_MAX, want)),
                    "display_limits=%r" % (display_limits,), want)
            if require_sandbox is not None:
                want = "made of the layers this library knows: %s" % _ALL_LAYERS
                _check_config(lib.ci_config_require_sandbox(
                    cfg, _uint(_NEW, "require_sandbox", int(require_sandbox), _C_UINT_MAX, want)),
                    "require_sandbox=%s" % Sandbox(int(require_sandbox)), want)
            if workspace_root is not None:
                _check_config(lib.ci_config_set_workspace_root(
                    cfg, _path_bytes(_NEW, "workspace_root", workspace_root)),
                    "workspace_root=%s" % _shown(workspace_root),
                    "an absolute path of at most 3000 bytes")
            if preload is not None:
                _check_config(lib.ci_config_set_preload(cfg, _preload_bytes(preload)),
                              "preload=%s" % _shown(preload),
                              "module names such as 'numpy,scipy.stats': joined by ',', "
                              "no spaces, at most 1024 bytes")
            flags = (("zygote", zygote, lib.ci_config_set_zygote),
                     ("rollback", rollback, lib.ci_config_set_rollback))
            for name, flag, setter in flags:
                if flag is not None:
                    _check_config(setter(cfg, _flag(name, flag)),
                                  "%s=%r" % (name, flag), "True or False")
            if manifest is not None:
                path = _path_bytes(_NEW, "manifest", manifest)
                if public_key is not None and public_key_bytes is not None:
                    raise _invalid(_NEW, "manifest=%s takes public_key or public_key_bytes, "
                                   "not both" % _shown(manifest))
                if public_key_bytes is not None:
                    key = _key_bytes(public_key_bytes)
                    _check_config(lib.ci_config_set_manifest_key(cfg, path, key, len(key)),
                                  "manifest=%s with public_key_bytes of %d bytes"
                                  % (_shown(manifest), len(key)),
                                  "a path of 1 to 4096 bytes, and the 32 bytes of an Ed25519 "
                                  "public key")
                else:
                    key_path = None if public_key is None else _path_bytes(_NEW, "public_key",
                                                                           public_key)
                    _check_config(lib.ci_config_set_manifest(cfg, path, key_path),
                                  "manifest=%s, public_key=%s" % (_shown(manifest),
                                                                  _shown(public_key)),
                                  "two paths of 1 to 4096 bytes (a manifest needs "
                                  "public_key or public_key_bytes)")
            elif public_key is not None or public_key_bytes is not None:
                raise _invalid(_NEW, "%s without manifest" % (
                    "public_key" if public_key is not None else "public_key_bytes"))
            if wheelhouse is not None:
                _check_config(lib.ci_config_set_wheelhouse(
                    cfg, _path_bytes(_NEW, "wheelhouse", wheelhouse)),
                    "wheelhouse=%s" % _shown(wheelhouse), "a path of 1 to 4096 bytes")
            self._functions.add_to(cfg)
            if call_limits is not None:
                args_bytes, result_bytes = call_limits
                want = "(args_bytes, result_bytes), each 1024 to 64 MiB (67108864)"
                _check_config(lib.ci_config_set_call_limits(
                    cfg, _uint(_NEW, "call_limits[0]", args_bytes, _C_SIZE_MAX, want),
                    _uint(_NEW, "call_limits[1]", result_bytes, _C_SIZE_MAX, want)),
                    "call_limits=%r" % (call_limits,), want)
            if allow_urls is not None:
                _add_urls(cfg, allow_urls)
            if url_limits is not None:
                request_bytes, response_bytes, url_timeout = url_limits
                want = "(request_bytes, response_bytes, timeout_ms): sizes of 1 to 256 MiB " \
                       "(268435456), a timeout of 1 to 3600000 ms"
                _check_config(lib.ci_config_set_url_limits(
                    cfg, _uint(_NEW, "url_limits[0]", request_bytes, _C_SIZE_MAX, want),
                    _uint(_NEW, "url_limits[1]", response_bytes, _C_SIZE_MAX, want),
                    _uint(_NEW, "url_limits[2]", url_timeout, _C_ULONG_MAX, want)),
                    "url_limits=%r" % (url_limits,), want)
            if audit_log is not None:
                _check_config(lib.ci_config_set_audit_log(
                    cfg, _path_bytes(_NEW, "audit_log", audit_log)),
                    "audit_log=%s" % _shown(audit_log), "a path of 1 to 4096 bytes")
            if self._on_event is not None:
                _check_config(lib.ci_config_set_event_fn(cfg, self._on_event, None),
                              "on_event", "a callable")
            handle = c_void_p()
            snapshot = self._restore_from
            if snapshot is None:
                rc = lib.ci_session_new(byref(handle), cfg)
            else:
                rc = lib.ci_session_restore(byref(handle), cfg, snapshot, len(snapshot))
            if rc != 0:
                # The detail of a failed ci_session_new() or restore is
                # kept per thread.
                raise error_from_code(rc, _text(lib.ci_session_errmsg(None)),
                                      op=_NEW if snapshot is None else _RESTORE)
        finally:
            lib.ci_config_free(cfg)
        self._handle = handle.value
        self._functions.handle = self._handle
        self._workspace = os.fsdecode(lib.ci_session_workspace(self._handle))
        self._refresh()

    # -- life cycle

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._handle is None

    def close(self) -> None:
        """Kills the worker and removes the session directory. Idempotent.

        Raises BusyError if a run is in progress in another thread
        (interrupt() it first)."""
        with self._lock:
            if self._handle is None:
                return
            if self._busy is not None:
                raise BusyError(ErrorCode.EBUSY, detail="refused: %s is in progress on this "
                                "session (interrupt() it first)" % _op(self._busy),
                                op=_op("close"))
            handle, self._handle = self._handle, None
            self._pid = None
            self._sandbox = Sandbox(0)
            self._rollback_active = False
        lib.ci_session_free(handle)

    def __del__(self) -> None:
        # A safety net only: nothing else can hold this object, so no run
        # is in progress. Guard against interpreter shutdown.
        handle = getattr(self, "_handle", None)
        if handle is not None:
            self._handle = None
            try:
                lib.ci_session_free(handle)
            except Exception:
                pass

    def __repr__(self) -> str:
        if self._handle is None:
            return "<codeinterp.Session closed>"
        return "<codeinterp.Session pid=%s workspace=%r>" % (self._pid, self._workspace)

    # -- guarding the handle

    def _begin(self, call: str) -> int:
        """Takes the session for the method @call ("run"), or raises."""
        with self._lock:
            if self._handle is None:
                raise SessionClosedError(op=_op(call))
            if self._busy is not None:
                raise BusyError(ErrorCode.EBUSY, detail="refused: %s is in progress on this "
                                "session" % _op(self._busy), op=_op(call))
            self._busy = call
            return self._handle

    def _end(self) -> None:
        with self._lock:
            self._busy = None

    def _error(self, rc: int, handle: int, call: str) -> CodeinterpError:
        """The exception for a failed @call on @handle; call it before _end()."""
        return error_from_code(rc, _text(lib.ci_session_errmsg(handle)), op=_op(call))

    def _refresh(self) -> None:
        """Caches pid, sandbox and rollback_active, for reading them while a
        run is in progress."""
        pid = lib.ci_session_pid(self._handle)
        self._pid = pid if pid > 0 else None
        self._sandbox = Sandbox(lib.ci_session_sandbox(self._handle))
        self._rollback_active = bool(lib.ci_session_rollback_active(self._handle))

    def _live_or_cached(self, attr: str) -> Tuple[Optional[int], Sandbox, bool]:
        with self._lock:
            if self._handle is None:
                raise SessionClosedError(op="Session." + attr)
            if self._busy is None:
                self._refresh()
            return self._pid, self._sandbox, self._rollback_active

    # -- properties

    @property
    def workspace(self) -> str:
        """Absolute path of the workspace, the cells' working directory."""
        if self._handle is None:
            raise SessionClosedError(op="Session.workspace")
        return self._workspace

    @property
    def pid(self) -> Optional[int]:
        """The worker's process id, or None when the worker is dead."""
        return self._live_or_cached("pid")[0]

    @property
    def sandbox(self) -> Sandbox:
        """The Sandbox layers the current worker applied (0 when dead);
        str() names them: "seccomp|rlimits|no_new_privs|..."."""
        return self._live_or_cached("sandbox")[1]

    @property
    def rollback_active(self) -> bool:
        """True if a cell that kills the worker will be rolled back: the
        session was started with rollback=True and got what it needs (a
        worker forked from the zygote, in a PID namespace of its own);
        False otherwise, and while the worker is dead."""
        return self._live_or_cached("rollback_active")[2]

    # -- calls

    def run(self, code: Union[str, bytes], timeout_ms: Optional[int] = None,
            on_output: Optional[OutputCallback] = None,
            on_input: Optional[InputCallback] = None) -> Result:
        """Runs one cell and returns its Result.

        A cell that raises, times out, runs out of memory or kills its
        worker is not an exception here: the Result's status says so.
        Exceptions are for refused calls: DeadSessionError (restart() the
        session), BusyError, TooBigError (a cell over 16 MiB),
        SessionClosedError.

        timeout_ms: this run's wall-clock limit instead of the session's,
                    1 to 86400000 (24 h).
        on_output:  called as on_output(stream, data) while the cell runs,
                    stream STREAM_STDOUT (1) or STREAM_STDERR (2), data the
                    raw bytes in whole lines: each chunk ends with a line
                    break, except a line of 16 KiB or more (given in pieces
                    cut on UTF-8 character boundaries), a partial line the
                    cell leaves waiting 5 ms (a progress bar printed with
                    end=''), and what is left when the run ends. A stream
                    that passes the output limit gets one note line, saying
                    so and where the whole stream goes, and nothing more.
                    It may call interrupt(). If it raises, it is not called again,
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
        op = _op("run")
        code_b = _code_bytes(op, code)
        if on_output is not None and not callable(on_output):
            raise TypeError("%s: on_output must be callable" % op)
        if on_input is not None and not callable(on_input):
            raise TypeError("%s: on_input must be callable" % op)
        opts = _lib.RunOptions()
        rc = lib.ci_run_options_init(byref(opts), _lib.CI_RUN_OPTIONS_VERSION)
        if rc != 0:
            raise error_from_code(rc, op=op)
        if timeout_ms is not None:
            want = "1 to %d (24 h), or None for the session's" % _MAX_RUN_TIMEOUT_MS
            if _uint(op, "timeout_ms", timeout_ms, _MAX_RUN_TIMEOUT_MS, want) == 0:
                raise _invalid(op, "timeout_ms=0 refused: must be %s" % want)
            opts.timeout_ms = timeout_ms

        failures: List[BaseException] = []
        callbacks: List[Any] = []  # referenced until ci_run_ex() returns
        out = c_void_p()
        handle = self._begin("run")

        def guarded(fn: Callable[..., Any], *args: Any) -> Any:
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
                output_fn: OutputCallback = on_output

                def output_trampoline(stream: int, data: int, length: int,
                                      payload: Optional[int]) -> None:
                    guarded(output_fn, stream, string_at(data, length))
                callbacks.append(_lib.OUTPUT_FN(output_trampoline))
                opts.on_output = callbacks[-1]
            if on_input is not None:
                def input_trampoline(prompt: bytes, password: int, reply: Any,
                                     payload: Optional[int]) -> int:
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
                raise self._error(rc, handle, "run")
            try:
                result = Result._from_c(out)
            finally:
                lib.ci_result_free(out)
            self._refresh()
        finally:
            self._end()
            callbacks.clear()
        if failures:
            raise failures[0]
        self._functions.take_pending()
        return result

    async def run_async(self, code: Union[str, bytes], timeout_ms: Optional[int] = None,
                        on_output: Optional[OutputCallback] = None,
                        on_input: Optional[InputCallback] = None) -> Result:
        """run() for asyncio: the cell runs in a thread of the event loop's
        default executor (asyncio.to_thread), so the loop goes on serving
        other tasks meanwhile, and different sessions' cells run at the
        same time (asyncio.gather). The arguments, the Result and the
        exceptions are run()'s.

        Cancelling the awaiting task (task.cancel(), asyncio.wait_for(),
        asyncio.timeout()) interrupts the cell, as interrupt() does, waits
        for the run to end, so that the session is free again when the
        CancelledError arrives, and raises it; the interrupted cell's
        Result is dropped. A cell that ignores the interrupt is killed
        after the grace period (grace_ms), which bounds the wait.

        on_output and on_input run in the executor's thread, not in the
        loop's: to reach the loop from them, use loop.call_soon_threadsafe()
        (or asyncio.run_coroutine_threadsafe() to await an answer).
        """
        cancelled = threading.Event()

        def job() -> Optional[Result]:
            if cancelled.is_set():      # cancelled before the thread started it
                return None
            return self.run(code, timeout_ms, on_output, on_input)

        task = asyncio.ensure_future(asyncio.to_thread(job))
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled.set()
            await self._interrupt_until_done(task)
            raise
        assert result is not None
        return result

    async def _interrupt_until_done(self, task: asyncio.Future[Optional[Result]]) -> None:
        """Interrupts the run of @task until the interrupt takes (the run
        may be between taking the session and starting the cell), then
        waits for the run to end; a second cancellation meanwhile does not
        cut the wait short."""
        interrupted = False
        while not task.done():
            if not interrupted:
                try:
                    interrupted = self.interrupt()
                except CodeinterpError:      # closed meanwhile: nothing to stop
                    interrupted = True
            try:
                await asyncio.wait({task}, timeout=None if interrupted else 0.02)
            except asyncio.CancelledError:
                pass
        if not task.cancelled():
            task.exception()    # retrieved: the run's own error goes with the result

    def interrupt(self) -> bool:
        """Stops the cell running on this session (from any thread), as
        Jupyter's "interrupt kernel": the cell gets a KeyboardInterrupt and
        its Result has Status.INTERRUPTED. Returns True if a cell was
        running, False if none was (it never affects a later cell)."""
        with self._lock:
            if self._handle is None:
                raise SessionClosedError(op=_op("interrupt"))
            if self._busy not in ("run", "snapshot", "fork"):
                return False
            rc: int = lib.ci_session_interrupt(self._handle)
        if rc < 0:
            raise error_from_code(rc, op=_op("interrupt"))
        return rc == 1

    @classmethod
    def restore(cls: Type[_S], snapshot: ReadableBuffer, **options: Any) -> _S:
        """A new session started from @snapshot (bytes of snapshot()),
        taken on this machine or another with the same package set: its
        files are written into the new workspace and its interpreter
        state loaded by the new, sandboxed worker; the execution count
        goes on from the snapshot's. @options are Session()'s.

        The bytes are checked whole first (format, SHA-256, every length
        and path) and only the sandboxed worker unpickles them, so bytes
        from elsewhere are safe to try. Raises InvalidArgumentError for
        bytes that are no snapshot (cut, changed, forged), another package
        set or a state that does not load (the message says which),
        TooBigError when the state or files are over the limits given, and
        Session()'s errors."""
        data = bytes(snapshot)
        self = cls.__new__(cls)
        self._restore_from = data
        try:
            self.__init__(**options)  # type: ignore[misc]
        finally:
            self._restore_from = None
        return self

    def snapshot(self) -> bytes:
        """The session's state as bytes for Session.restore(): every
        variable the cells made (functions, lambdas and classes defined in
        cells too), the histories In and Out, the execution count, the
        random generators' states, and the workspace's files. What cannot
        be carried (a generator in flight, a file object, a socket, a
        thread, a symbolic link) is left out and named by
        snapshot_left_out(). Runs between cells with a cell's timeout;
        interrupt() stops it. The session goes on unchanged.

        Raises DeadSessionError if the worker is dead (or died pickling),
        TooBigError if the workspace is over what a snapshot carries,
        WorkspaceIOError if pickling failed or was stopped."""
        return self._snapshot("snapshot")

    def _snapshot(self, call: str) -> bytes:
        """snapshot(), its errors named after @call."""
        data = c_void_p()
        size = c_size_t(0)
        handle = self._begin(call)
        try:
            rc = lib.ci_session_snapshot(handle, byref(data), byref(size))
            if rc != 0:
                err = self._error(rc, handle, call)
                self._refresh()
                raise err
            try:
                return string_at(data, size.value)
            finally:
                lib.ci_free(data)
        finally:
            self._end()

    def fork(self) -> "Session":
        """A branch: a new Session with this one's options whose state and
        files are a copy of this one's, as snapshot() carries them; what
        either does afterwards the other never sees. Today the copy is a
        snapshot restored at once: this session is busy while it is
        taken, and what a snapshot cannot carry is missing from the
        branch (its left_out names it). Raises as snapshot() and
        Session.restore() do."""
        return type(self).restore(self._snapshot("fork"), **self._options)

    @property
    def left_out(self) -> List[str]:
        """What the snapshot this session was started from (restore(),
        fork()) could not carry, one "name: reason" string each; [] for
        any other session and after restart()."""
        with self._lock:
            if self._handle is None:
                raise SessionClosedError(op=_op("left_out"))
            if self._busy is not None:
                # restart() frees the string it would read.
                raise BusyError(ErrorCode.EBUSY, detail="refused: %s is in progress on this "
                                "session" % _op(self._busy), op=_op("left_out"))
            text: bytes = lib.ci_session_left_out(self._handle)
        return text.decode("utf-8", "replace").splitlines()

    def restart(self) -> None:
        """A fresh interpreter in the same workspace (files kept, state and
        execution count reset). Also revives a dead session. With a
        manifest, it is verified again first (ManifestError)."""
        handle = self._begin("restart")
        try:
            rc = lib.ci_session_restart(handle)
            if rc != 0:
                err = self._error(rc, handle, "restart")
                self._refresh()
                raise err
            self._refresh()
        finally:
            self._end()

    def put_file(self, name: PathLike, data: ReadableBuffer) -> None:
        """Writes @data (bytes-like) to @name in the workspace, atomically.
        @name is relative to the workspace ("/" separates existing
        directories; no empty, "." or ".." component); str names are
        encoded with os.fsencode."""
        name_b = _name_bytes(_op("put_file"), name)
        if isinstance(data, str):
            raise TypeError("%s: data must be bytes-like, not str (encode it first)"
                            % _op("put_file"))
        buf: Any
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
                raise self._error(rc, handle, "put_file")
        finally:
            self._end()
            buf = None

    def get_file(self, name: PathLike) -> bytes:
        """The whole file @name of the workspace, as bytes."""
        name_b = _name_bytes(_op("get_file"), name)
        data = c_void_p()
        size = c_size_t(0)
        handle = self._begin("get_file")
        try:
            rc = lib.ci_session_get_file(handle, name_b, byref(data), byref(size))
            if rc != 0:
                raise self._error(rc, handle, "get_file")
            try:
                return string_at(data, size.value) if size.value else b""
            finally:
                lib.ci_free(data)
        finally:
            self._end()


def version() -> str:
    """ci_version(): the version of the loaded C library, "0.1.0"."""
    text: bytes = lib.ci_version()
    return text.decode("ascii")


def snapshot_left_out(snapshot: ReadableBuffer) -> List[str]:
    """What @snapshot (bytes of Session.snapshot()) could not carry, one
    "name: reason" string per item (a variable, "Out[N]", or a workspace
    path); [] when all was carried. Raises InvalidArgumentError for bytes
    that are no snapshot."""
    data = bytes(snapshot)
    out = c_void_p()
    rc = lib.ci_snapshot_left_out(data, len(data), byref(out))
    if rc != 0:
        raise error_from_code(rc, _text(lib.ci_session_errmsg(None)),
                              op="codeinterp.snapshot_left_out()")
    try:
        return string_at(out).decode("utf-8", "replace").splitlines()
    finally:
        lib.ci_free(out)
