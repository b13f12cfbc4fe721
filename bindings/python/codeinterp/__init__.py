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

In asyncio code, `await s.run_async(code)` runs the cell in a thread
and leaves the event loop free; cancelling the task interrupts the cell.

The library is found as an installed one is, by its soname
libcodeinterp.so.0 (ctypes.util.find_library, then the loader's own
search); $CODEINTERP_LIBRARY, a path, overrides both.
"""

from ._lib import path as library_path
from .errors import (BusyError, CodeinterpError, DeadSessionError, ErrorCode,
                     InvalidArgumentError, ManifestError, NoMemoryError,
                     NoSuchFileError, ProtocolError, SandboxUnavailableError,
                     SessionClosedError, SpawnError, TooBigError, UnsafeFileError,
                     WorkspaceIOError, strerror)
from .session import (MAX_CELL_BYTES, MAX_OUTPUTS, STREAM_STDERR, STREAM_STDOUT,
                      CellError, HostFunction, InputCallback, Output, OutputCallback, Result,
                      Sandbox, Session, Status, Truncated, snapshot_left_out, version)

__version__ = "0.1.0"

__all__ = [
    "Session", "Result", "Status", "CellError", "Output", "Sandbox", "Truncated",
    "STREAM_STDOUT", "STREAM_STDERR", "MAX_OUTPUTS", "MAX_CELL_BYTES",
    "OutputCallback", "InputCallback", "HostFunction",
    "snapshot_left_out", "version", "library_path", "strerror", "ErrorCode",
    "CodeinterpError", "InvalidArgumentError", "SessionClosedError",
    "NoMemoryError", "SpawnError", "DeadSessionError", "BusyError",
    "ProtocolError", "WorkspaceIOError", "NoSuchFileError", "TooBigError",
    "UnsafeFileError", "SandboxUnavailableError", "ManifestError",
]
