"""Exceptions for failed calls: one class per CI_E* return code.

A failed call is not a failed cell. A cell that raises, times out or kills
its worker comes back as a Result whose status says so; the exceptions here
are for calls the library refused (a closed or dead session, a missing
file, a bad argument...).
"""

from __future__ import annotations

import enum
import re
from typing import Dict, Optional, Type, Union

from ._lib import lib


class ErrorCode(enum.IntEnum):
    """The return codes of include/codeinterp.h (CI_ERRORS)."""

    OK = 0
    EINVAL = -1
    ENOMEM = -2
    ESPAWN = -3
    EDEAD = -4
    EBUSY = -5
    EPROTO = -6
    EIO = -7
    ENOENT = -8
    ETOOBIG = -9
    EUNSAFE = -10
    ESANDBOX = -11
    EMANIFEST = -12


def strerror(code: int) -> str:
    """ci_strerror(): the library's message for a return code."""
    text: bytes = lib.ci_strerror(int(code))
    return text.decode("utf-8", "replace")


# The "ci_session_get_file: " that opens some of the library's messages:
# the exception's op already names the call, in Python's terms.
_C_PREFIX = re.compile(r"^ci_[a-z0-9_]+: ")
_C_NAME = re.compile(r"\bci_[a-z0-9_]+\b")
# The Python for each C function a message may name.
_PY_NAMES = {
    "ci_session_new": "Session()",
    "ci_session_restart": "Session.restart()",
    "ci_session_interrupt": "Session.interrupt()",
    "ci_session_put_file": "Session.put_file()",
    "ci_session_get_file": "Session.get_file()",
    "ci_session_free": "Session.close()",
    "ci_run": "Session.run()",
    "ci_run_ex": "Session.run()",
    "ci_run_stream": "Session.run()",
}


def python_names(text: str) -> str:
    """A message of the library in this binding's terms: no leading
    "ci_xxx: ", and Session.restart() where it says ci_session_restart."""
    text = _C_PREFIX.sub("", text)
    return _C_NAME.sub(lambda m: _PY_NAMES.get(m.group(0), m.group(0)), text)


class CodeinterpError(Exception):
    """A call into libcodeinterp failed.

    Attributes:
        code:    the return code, an ErrorCode (a plain int if this library
                 is newer than the binding and returned a code it does not
                 know).
        name:    the C name of the code, "CI_EINVAL", "CI_EDEAD"...
        op:      the call that failed, "Session.get_file()", or None.
        message: op, ci_strerror(code) and the detail:
                 "Session.get_file(): invalid argument: name '../x' has a
                 '..' component: ...".
        detail:  what was wrong this time ("" when there is nothing to
                 add): the refused argument and why, or the library's own
                 detail (ci_session_errmsg). The C functions either names
                 are given as this binding's ("call Session.restart()").
    """

    code: Union[ErrorCode, int]
    name: str
    op: Optional[str]
    message: str
    detail: str

    def __init__(self, code: int, message: Optional[str] = None, detail: str = "",
                 op: Optional[str] = None) -> None:
        try:
            known = ErrorCode(code)
            name = "CI_" + known.name
            code = known
        except ValueError:
            name = "CI_E%d" % -int(code) if int(code) < 0 else "CI_%d" % int(code)
        detail = python_names(detail)
        if message is None:
            message = python_names(strerror(code))
            if detail:
                message = "%s: %s" % (message, detail)
        if op:
            message = "%s: %s" % (op, message)
        super().__init__(code, message)
        self.code = code
        self.name = name
        self.op = op
        self.message = message
        self.detail = detail

    def __str__(self) -> str:
        return "%s (%s)" % (self.message, self.name)


class InvalidArgumentError(CodeinterpError, ValueError):
    """CI_EINVAL: an argument was refused (also a ValueError)."""


class SessionClosedError(InvalidArgumentError):
    """The session was closed; no call but close() is allowed on it."""

    def __init__(self, code: int = ErrorCode.EINVAL, message: Optional[str] = "the session is closed",
                 detail: str = "", op: Optional[str] = None) -> None:
        super().__init__(code, message, detail, op)


class NoMemoryError(CodeinterpError):
    """CI_ENOMEM: the library ran out of memory (in the host, not the cell)."""


class SpawnError(CodeinterpError):
    """CI_ESPAWN: the worker could not be started or did not become ready."""


class DeadSessionError(CodeinterpError):
    """CI_EDEAD: the worker is dead; Session.restart() revives it."""


class BusyError(CodeinterpError):
    """CI_EBUSY: a run (or another call) is in progress on the session."""


class ProtocolError(CodeinterpError):
    """CI_EPROTO: the worker broke the protocol."""


class WorkspaceIOError(CodeinterpError):
    """CI_EIO: an input/output error."""


class NoSuchFileError(CodeinterpError):
    """CI_ENOENT: no such file (or directory on the path) in the workspace."""


class TooBigError(CodeinterpError):
    """CI_ETOOBIG: a cell over 16 MiB, or a file over the file limit."""


class UnsafeFileError(CodeinterpError):
    """CI_EUNSAFE: a link, or not a regular file."""


class SandboxUnavailableError(CodeinterpError):
    """CI_ESANDBOX: a sandbox layer the session requires is not available."""


class ManifestError(CodeinterpError):
    """CI_EMANIFEST: the signed package manifest (Session(manifest=...)) is
    malformed, badly signed, or does not match the installed files; .detail
    names the cause (an unreadable file and its path, another key, a listed
    file changed or missing, an unlisted file present, no Landlock, a
    wheelhouse without a manifest...)."""


_BY_CODE: Dict[int, Type[CodeinterpError]] = {
    ErrorCode.EINVAL: InvalidArgumentError,
    ErrorCode.ENOMEM: NoMemoryError,
    ErrorCode.ESPAWN: SpawnError,
    ErrorCode.EDEAD: DeadSessionError,
    ErrorCode.EBUSY: BusyError,
    ErrorCode.EPROTO: ProtocolError,
    ErrorCode.EIO: WorkspaceIOError,
    ErrorCode.ENOENT: NoSuchFileError,
    ErrorCode.ETOOBIG: TooBigError,
    ErrorCode.EUNSAFE: UnsafeFileError,
    ErrorCode.ESANDBOX: SandboxUnavailableError,
    ErrorCode.EMANIFEST: ManifestError,
}


def error_from_code(code: int, detail: Optional[str] = "", message: Optional[str] = None,
                    op: Optional[str] = None) -> CodeinterpError:
    """The exception for return code @code (an instance, not raised); @op
    names the call that failed."""
    cls = _BY_CODE.get(code, CodeinterpError)
    return cls(code, message, (detail or "").strip(), op)
