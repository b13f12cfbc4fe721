"""codeinterp: a sandboxed, stateful Python interpreter for AI agents.

A ctypes binding of libcodeinterp (include/codeinterp.h):

    import codeinterp

    with codeinterp.Session(timeout_ms=10_000) as s:
        s.put_file("data.csv", b"a,b\\n1,2\\n")
        r = s.run("import pandas as pd\\ndf = pd.read_csv('data.csv')\\ndf.a.sum()")
        if r.status is codeinterp.Status.OK:
            print(r.value)                      # '1'
        else:
            print(r.error.name, r.error.value)

The library is loaded from $CODEINTERP_LIBRARY when set, else found as
libcodeinterp (ctypes.util.find_library) or by its soname
libcodeinterp.so.0.
"""

from ._lib import path as library_path
from .errors import (BusyError, CodeinterpError, DeadSessionError, ErrorCode,
                     InvalidArgumentError, ManifestError, NoMemoryError,
                     NoSuchFileError, ProtocolError, SandboxUnavailableError,
                     SessionClosedError, SpawnError, TooBigError, UnsafeFileError,
                     WorkspaceIOError, strerror)
from .session import (MAX_CELL_BYTES, MAX_OUTPUTS, STREAM_STDERR, STREAM_STDOUT,
                      CellError, Output, Result, Sandbox, Session, Status,
                      Truncated, version)

__version__ = "0.1.0"

__all__ = [
    "Session", "Result", "Status", "CellError", "Output", "Sandbox", "Truncated",
    "STREAM_STDOUT", "STREAM_STDERR", "MAX_OUTPUTS", "MAX_CELL_BYTES",
    "version", "library_path", "strerror", "ErrorCode",
    "CodeinterpError", "InvalidArgumentError", "SessionClosedError",
    "NoMemoryError", "SpawnError", "DeadSessionError", "BusyError",
    "ProtocolError", "WorkspaceIOError", "NoSuchFileError", "TooBigError",
    "UnsafeFileError", "SandboxUnavailableError", "ManifestError",
]
