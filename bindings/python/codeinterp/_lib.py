"""Loading libcodeinterp and declaring the C prototypes (private).

Every function of include/codeinterp.h that the binding calls is declared
here with its argtypes and restype, so ctypes never guesses an int where
the C side has a pointer or a 64-bit number.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Any, Dict, List, Tuple

from ctypes import (CFUNCTYPE, POINTER, c_char_p, c_int, c_size_t, c_uint,
                    c_ulong, c_ulonglong, c_void_p)

# The ABI major this binding is written against (the library's soname).
ABI_MAJOR = 0
SONAME = "libcodeinterp.so.%d" % ABI_MAJOR

ci_uint64 = c_ulonglong  # unsigned long long in the header

# typedef void (*ci_output_fn)(int stream, const char *data, size_t len,
#                              void *payload);
# data is declared void * so ctypes hands over the address, not a
# NUL-terminated copy: the chunk is raw bytes and may hold NULs.
OUTPUT_FN = CFUNCTYPE(None, c_int, c_void_p, c_size_t, c_void_p)

# typedef int (*ci_input_fn)(const char *prompt, int password, char **reply,
#                            void *payload);
# *reply gets a buffer from libc's malloc(), which the library free()s.
INPUT_FN = CFUNCTYPE(c_int, c_char_p, c_int, POINTER(c_void_p), c_void_p)

# typedef void (*ci_function_fn)(void *payload, const char *name,
#                                const char *args_json, size_t args_len,
#                                ci_reply *reply);
# args_json is void *: its length is given, and a string in it may hold an
# escaped NUL.
FUNCTION_FN = CFUNCTYPE(None, c_void_p, c_char_p, c_void_p, c_size_t, c_void_p)

# typedef int (*ci_event_fn)(const char *line, size_t len, void *payload);
# line is void *: its length is given.
EVENT_FN = CFUNCTYPE(c_int, c_void_p, c_size_t, c_void_p)

CI_RUN_OPTIONS_VERSION = 2


class RunOptions(ctypes.Structure):
    """struct ci_run_options, version 2."""

    _fields_ = [
        ("version", c_uint),
        ("timeout_ms", c_ulong),
        ("on_output", OUTPUT_FN),
        ("payload", c_void_p),
        ("on_input", INPUT_FN),
    ]


# The C library's allocator, for the replies of INPUT_FN.
_libc = ctypes.CDLL(None)
malloc = _libc.malloc
malloc.restype = c_void_p
malloc.argtypes = [c_size_t]


_SIZE_P = POINTER(c_size_t)

# name: (restype, argtypes). Opaque handles (ci_config *, ci_session *,
# ci_result *) are c_void_p. Strings the library returns with a length, or
# that may hold arbitrary bytes, are c_void_p and read with string_at().
_PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    "ci_version": (c_char_p, []),
    "ci_strerror": (c_char_p, [c_int]),
    "ci_status_name": (c_char_p, [c_int]),
    # config
    "ci_config_new": (c_void_p, []),
    "ci_config_free": (None, [c_void_p]),
    "ci_config_require_sandbox": (c_int, [c_void_p, c_uint]),
    "ci_config_set_timeout_ms": (c_int, [c_void_p, c_ulong]),
    "ci_config_set_grace_ms": (c_int, [c_void_p, c_ulong]),
    "ci_config_set_startup_timeout_ms": (c_int, [c_void_p, c_ulong]),
    "ci_config_set_memory_limit": (c_int, [c_void_p, ci_uint64]),
    "ci_config_set_output_limit": (c_int, [c_void_p, c_size_t]),
    "ci_config_set_spill_limit": (c_int, [c_void_p, ci_uint64]),
    "ci_config_set_display_limits": (c_int, [c_void_p, c_size_t, c_size_t]),
    "ci_config_set_figure_dpi": (c_int, [c_void_p, c_uint]),
    "ci_config_set_file_limit": (c_int, [c_void_p, ci_uint64]),
    "ci_config_set_task_limit": (c_int, [c_void_p, c_ulong]),
    "ci_config_set_disk_quota": (c_int, [c_void_p, ci_uint64]),
    "ci_config_set_inode_quota": (c_int, [c_void_p, ci_uint64]),
    "ci_config_set_workspace_root": (c_int, [c_void_p, c_char_p]),
    "ci_config_set_preload": (c_int, [c_void_p, c_char_p]),
    "ci_config_set_zygote": (c_int, [c_void_p, c_int]),
    "ci_config_set_rollback": (c_int, [c_void_p, c_int]),
    "ci_config_set_manifest": (c_int, [c_void_p, c_char_p, c_char_p]),
    "ci_config_set_manifest_key": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t]),
    "ci_config_set_wheelhouse": (c_int, [c_void_p, c_char_p]),
    "ci_config_add_function": (c_int, [c_void_p, c_char_p, c_char_p, FUNCTION_FN, c_void_p]),
    "ci_config_set_call_limits": (c_int, [c_void_p, c_size_t, c_size_t]),
    "ci_config_allow_url": (c_int, [c_void_p, c_char_p]),
    "ci_config_set_url_header": (c_int, [c_void_p, c_char_p, c_char_p]),
    "ci_config_set_url_limits": (c_int, [c_void_p, c_size_t, c_size_t, c_ulong]),
    "ci_config_set_audit_log": (c_int, [c_void_p, c_char_p]),
    "ci_config_set_event_fn": (c_int, [c_void_p, EVENT_FN, c_void_p]),
    "ci_reply_json": (c_int, [c_void_p, c_char_p, c_size_t]),
    "ci_reply_error": (c_int, [c_void_p, c_char_p, c_char_p]),
    # session
    "ci_session_new": (c_int, [POINTER(c_void_p), c_void_p]),
    "ci_session_free": (None, [c_void_p]),
    "ci_session_restart": (c_int, [c_void_p]),
    "ci_session_errmsg": (c_char_p, [c_void_p]),
    "ci_session_workspace": (c_char_p, [c_void_p]),
    "ci_session_sandbox": (c_uint, [c_void_p]),
    "ci_session_pid": (c_int, [c_void_p]),
    "ci_session_put_file": (c_int, [c_void_p, c_char_p, c_void_p, c_size_t]),
    "ci_session_get_file": (c_int, [c_void_p, c_char_p, POINTER(c_void_p), _SIZE_P]),
    "ci_free": (None, [c_void_p]),
    "ci_session_interrupt": (c_int, [c_void_p]),
    "ci_session_snapshot": (c_int, [c_void_p, POINTER(c_void_p), _SIZE_P]),
    "ci_session_restore": (c_int, [POINTER(c_void_p), c_void_p, c_char_p, c_size_t]),
    "ci_snapshot_left_out": (c_int, [c_char_p, c_size_t, POINTER(c_void_p)]),
    "ci_session_left_out": (c_char_p, [c_void_p]),
    "ci_session_rollback_active": (c_int, [c_void_p]),
    # run
    "ci_run_options_init": (c_int, [POINTER(RunOptions), c_uint]),
    "ci_run_ex": (c_int, [c_void_p, c_char_p, POINTER(RunOptions), POINTER(c_void_p)]),
    # result
    "ci_result_free": (None, [c_void_p]),
    "ci_result_status": (c_int, [c_void_p]),
    "ci_result_stdout": (c_void_p, [c_void_p, _SIZE_P]),
    "ci_result_stderr": (c_void_p, [c_void_p, _SIZE_P]),
    "ci_result_truncated": (c_int, [c_void_p]),
    "ci_result_rolled_back": (c_int, [c_void_p]),
    "ci_result_spill_file": (c_char_p, [c_void_p, c_int, c_void_p]),
    "ci_result_value": (c_char_p, [c_void_p]),
    "ci_result_error_name": (c_char_p, [c_void_p]),
    "ci_result_error_value": (c_char_p, [c_void_p]),
    "ci_result_traceback": (c_char_p, [c_void_p]),
    "ci_result_traceback_full": (c_char_p, [c_void_p]),
    "ci_result_output_count": (c_size_t, [c_void_p]),
    "ci_result_output_mime": (c_char_p, [c_void_p, c_size_t]),
    "ci_result_output_data": (c_void_p, [c_void_p, c_size_t, _SIZE_P]),
    "ci_result_output_type": (c_int, [c_void_p, c_size_t]),
    "ci_result_output_message": (c_size_t, [c_void_p, c_size_t]),
    "ci_result_output_display_id": (c_char_p, [c_void_p, c_size_t]),
    "ci_result_output_wait": (c_int, [c_void_p, c_size_t]),
    "ci_result_outputs_omitted": (c_size_t, [c_void_p]),
    "ci_result_file_count": (c_size_t, [c_void_p]),
    "ci_result_file_name": (c_char_p, [c_void_p, c_size_t]),
    "ci_result_wall_time_us": (ci_uint64, [c_void_p]),
    "ci_result_cpu_time_us": (ci_uint64, [c_void_p]),
    "ci_result_peak_memory": (ci_uint64, [c_void_p]),
    "ci_result_execution_count": (c_int, [c_void_p]),
}


def _candidates() -> Tuple[List[str], bool]:
    """The names to try, and whether they come from $CODEINTERP_LIBRARY."""
    env = os.environ.get("CODEINTERP_LIBRARY")
    if env:
        return [env], True
    names = []
    found = ctypes.util.find_library("codeinterp")
    if found:
        names.append(found)
    if SONAME not in names:
        names.append(SONAME)
    return names, False


def _load() -> Tuple[ctypes.CDLL, str]:
    names, from_env = _candidates()
    errors = []
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            errors.append(str(e))
            continue
        break
    else:
        where = ("CODEINTERP_LIBRARY=%s" % names[0]) if from_env else ", ".join(names)
        raise ImportError(
            "codeinterp: cannot load the C library (%s): %s. Build it with "
            "`make` and set CODEINTERP_LIBRARY to build/libcodeinterp.so.0, "
            "or install it with `make install`." % (where, "; ".join(errors)))
    for fname, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, fname)
        except AttributeError:
            raise ImportError("codeinterp: %s has no %s(); it is not a "
                              "libcodeinterp this binding knows" % (name, fname)) from None
        fn.restype = restype
        fn.argtypes = argtypes
    version = lib.ci_version().decode("ascii", "replace")
    if version.split(".")[0] != str(ABI_MAJOR):
        raise ImportError("codeinterp: %s is version %s; this binding needs %d.x"
                          % (name, version, ABI_MAJOR))
    return lib, name


lib, path = _load()
