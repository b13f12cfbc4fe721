//! Raw declarations of libcodeinterp's `include/codeinterp.h`, one for one.
//!
//! Everything here is `unsafe` and follows the C header's rules (who frees
//! what, which pointers are borrowed, one thread per session at a time).
//! The safe API is the `codeinterp` crate, which re-exports this one as
//! `codeinterp::sys`. The build script links libcodeinterp through
//! `$CODEINTERP_LIB_DIR` or pkg-config (see the README). C enums (`ci_status`,
//! `ci_output_type`, `enum ci_error`) are plain `c_int`s here, so that a
//! value a newer library adds cannot be an invalid Rust enum.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_uchar, c_uint, c_ulong, c_ulonglong, c_void};

pub const CI_VERSION_MAJOR: c_int = 0;
pub const CI_VERSION_MINOR: c_int = 1;
pub const CI_VERSION_PATCH: c_int = 0;
pub const CI_VERSION_NUMBER: c_int =
    CI_VERSION_MAJOR * 10000 + CI_VERSION_MINOR * 100 + CI_VERSION_PATCH;

/// `ci_uint64`: an unsigned 64-bit count of bytes or microseconds.
pub type ci_uint64 = c_ulonglong;

/// Opaque `ci_config`.
#[repr(C)]
pub struct ci_config {
    _private: [u8; 0],
}

/// Opaque `ci_session`.
#[repr(C)]
pub struct ci_session {
    _private: [u8; 0],
}

/// Opaque `ci_result`.
#[repr(C)]
pub struct ci_result {
    _private: [u8; 0],
}

// enum ci_error (CI_ERRORS in the header).
pub const CI_OK: c_int = 0;
pub const CI_EINVAL: c_int = -1;
pub const CI_ENOMEM: c_int = -2;
pub const CI_ESPAWN: c_int = -3;
pub const CI_EDEAD: c_int = -4;
pub const CI_EBUSY: c_int = -5;
pub const CI_EPROTO: c_int = -6;
pub const CI_EIO: c_int = -7;
pub const CI_ENOENT: c_int = -8;
pub const CI_ETOOBIG: c_int = -9;
pub const CI_EUNSAFE: c_int = -10;
pub const CI_ESANDBOX: c_int = -11;
pub const CI_EMANIFEST: c_int = -12;

/// `ci_status`.
pub type ci_status = c_int;
pub const CI_STATUS_OK: ci_status = 0;
pub const CI_STATUS_ERROR: ci_status = 1;
pub const CI_STATUS_TIMEOUT: ci_status = 2;
pub const CI_STATUS_MEMORY: ci_status = 3;
pub const CI_STATUS_KILLED: ci_status = 4;
pub const CI_STATUS_INTERRUPTED: ci_status = 5;

// Sandbox layers (ci_session_sandbox, ci_config_require_sandbox).
pub const CI_SANDBOX_SECCOMP: c_uint = 0x1;
pub const CI_SANDBOX_RLIMITS: c_uint = 0x2;
pub const CI_SANDBOX_NO_NEW_PRIVS: c_uint = 0x4;
pub const CI_SANDBOX_LANDLOCK: c_uint = 0x8;
pub const CI_SANDBOX_UNPRIVILEGED: c_uint = 0x10;
pub const CI_SANDBOX_USERNS: c_uint = 0x20;
pub const CI_SANDBOX_NETNS: c_uint = 0x40;
pub const CI_SANDBOX_IPCNS: c_uint = 0x80;
pub const CI_SANDBOX_UTSNS: c_uint = 0x100;
pub const CI_SANDBOX_MNTNS: c_uint = 0x200;
pub const CI_SANDBOX_PIDNS: c_uint = 0x400;
pub const CI_SANDBOX_TASK_LIMIT: c_uint = 0x800;
pub const CI_SANDBOX_DISK_QUOTA: c_uint = 0x1000;

// Output streams (ci_output_fn).
pub const CI_STREAM_STDOUT: c_int = 1;
pub const CI_STREAM_STDERR: c_int = 2;

// ci_result_truncated bits.
pub const CI_TRUNCATED_STDOUT: c_int = 0x1;
pub const CI_TRUNCATED_STDERR: c_int = 0x2;
pub const CI_TRUNCATED_TEXT: c_int = 0x4;
pub const CI_TRUNCATED_OUTPUTS: c_int = 0x8;
pub const CI_TRUNCATED_FILES: c_int = 0x10;

pub const CI_MAX_OUTPUTS: usize = 10000;

/// `ci_output_type`.
pub type ci_output_type = c_int;
pub const CI_OUTPUT_DISPLAY_DATA: ci_output_type = 1;
pub const CI_OUTPUT_EXECUTE_RESULT: ci_output_type = 2;
pub const CI_OUTPUT_UPDATE_DISPLAY_DATA: ci_output_type = 3;
pub const CI_OUTPUT_CLEAR_OUTPUT: ci_output_type = 4;

/// `ci_output_fn`: receives a cell's output while it runs.
pub type ci_output_fn =
    Option<unsafe extern "C" fn(stream: c_int, data: *const c_char, len: usize, payload: *mut c_void)>;

/// `ci_event_fn`: receives each audit event's JSON line (`len` bytes,
/// NUL-terminated, no newline); 0 takes it, anything else is a failed write.
pub type ci_event_fn =
    Option<unsafe extern "C" fn(line: *const c_char, len: usize, payload: *mut c_void) -> c_int>;

/// `ci_input_fn`: answers a cell's `input()`; `*reply` gets a buffer from
/// libc's `malloc`, which the library frees.
pub type ci_input_fn = Option<
    unsafe extern "C" fn(
        prompt: *const c_char,
        password: c_int,
        reply: *mut *mut c_char,
        payload: *mut c_void,
    ) -> c_int,
>;

/// Opaque `ci_reply`: a host function's answer, valid during its call.
#[repr(C)]
pub struct ci_reply {
    _private: [u8; 0],
}

/// `ci_function_fn`: runs a host function for a cell; answers through
/// `reply` with `ci_reply_json` or `ci_reply_error`.
pub type ci_function_fn = Option<
    unsafe extern "C" fn(
        payload: *mut c_void,
        name: *const c_char,
        args_json: *const c_char,
        args_len: usize,
        reply: *mut ci_reply,
    ),
>;

pub const CI_RUN_OPTIONS_VERSION: c_uint = 2;

/// `ci_run_options`, version 2.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ci_run_options {
    pub version: c_uint,
    pub timeout_ms: c_ulong,
    pub on_output: ci_output_fn,
    pub payload: *mut c_void,
    pub on_input: ci_input_fn,
}

/// `CI_RUN_OPTIONS_INIT`.
pub const CI_RUN_OPTIONS_INIT: ci_run_options = ci_run_options {
    version: CI_RUN_OPTIONS_VERSION,
    timeout_ms: 0,
    on_output: None,
    payload: std::ptr::null_mut(),
    on_input: None,
};

extern "C" {
    pub fn ci_version() -> *const c_char;
    pub fn ci_strerror(code: c_int) -> *const c_char;
    pub fn ci_status_name(status: ci_status) -> *const c_char;

    pub fn ci_config_new() -> *mut ci_config;
    pub fn ci_config_free(cfg: *mut ci_config);
    pub fn ci_config_require_sandbox(cfg: *mut ci_config, mask: c_uint) -> c_int;
    pub fn ci_config_set_timeout_ms(cfg: *mut ci_config, ms: c_ulong) -> c_int;
    pub fn ci_config_set_grace_ms(cfg: *mut ci_config, ms: c_ulong) -> c_int;
    pub fn ci_config_set_startup_timeout_ms(cfg: *mut ci_config, ms: c_ulong) -> c_int;
    pub fn ci_config_set_memory_limit(cfg: *mut ci_config, bytes: ci_uint64) -> c_int;
    pub fn ci_config_set_output_limit(cfg: *mut ci_config, bytes: usize) -> c_int;
    pub fn ci_config_set_spill_limit(cfg: *mut ci_config, bytes: u64) -> c_int;
    pub fn ci_config_set_display_limits(cfg: *mut ci_config, per_output: usize, per_run: usize)
        -> c_int;
    pub fn ci_config_set_figure_dpi(cfg: *mut ci_config, dpi: c_uint) -> c_int;
    pub fn ci_config_set_file_limit(cfg: *mut ci_config, bytes: ci_uint64) -> c_int;
    pub fn ci_config_set_task_limit(cfg: *mut ci_config, tasks: c_ulong) -> c_int;
    pub fn ci_config_set_disk_quota(cfg: *mut ci_config, bytes: ci_uint64) -> c_int;
    pub fn ci_config_set_inode_quota(cfg: *mut ci_config, inodes: ci_uint64) -> c_int;
    pub fn ci_config_set_cpu_limit(cfg: *mut ci_config, seconds: c_ulong) -> c_int;
    pub fn ci_config_set_workspace_root(cfg: *mut ci_config, dir: *const c_char) -> c_int;
    pub fn ci_config_set_preload(cfg: *mut ci_config, modules: *const c_char) -> c_int;
    pub fn ci_config_set_zygote(cfg: *mut ci_config, enabled: c_int) -> c_int;
    pub fn ci_config_set_rollback(cfg: *mut ci_config, enabled: c_int) -> c_int;
    pub fn ci_config_set_manifest(
        cfg: *mut ci_config,
        manifest_path: *const c_char,
        public_key_path: *const c_char,
    ) -> c_int;
    pub fn ci_config_set_manifest_key(
        cfg: *mut ci_config,
        manifest_path: *const c_char,
        public_key: *const c_uchar,
        key_len: usize,
    ) -> c_int;
    pub fn ci_config_set_wheelhouse(cfg: *mut ci_config, dir: *const c_char) -> c_int;
    pub fn ci_config_add_function(
        cfg: *mut ci_config,
        name: *const c_char,
        description: *const c_char,
        func: ci_function_fn,
        payload: *mut c_void,
    ) -> c_int;
    pub fn ci_config_set_call_limits(cfg: *mut ci_config, args_bytes: usize, result_bytes: usize)
        -> c_int;
    pub fn ci_config_allow_url(cfg: *mut ci_config, prefix: *const c_char) -> c_int;
    pub fn ci_config_set_url_header(
        cfg: *mut ci_config,
        prefix: *const c_char,
        header: *const c_char,
    ) -> c_int;
    pub fn ci_config_set_url_limits(
        cfg: *mut ci_config,
        request_bytes: usize,
        response_bytes: usize,
        timeout_ms: c_ulong,
    ) -> c_int;
    pub fn ci_config_set_audit_log(cfg: *mut ci_config, path: *const c_char) -> c_int;
    pub fn ci_config_set_event_fn(cfg: *mut ci_config, f: ci_event_fn, payload: *mut c_void)
        -> c_int;
    pub fn ci_reply_json(reply: *mut ci_reply, json: *const c_char, len: usize) -> c_int;
    pub fn ci_reply_error(
        reply: *mut ci_reply,
        exception_name: *const c_char,
        message: *const c_char,
    ) -> c_int;

    pub fn ci_session_new(out: *mut *mut ci_session, cfg: *const ci_config) -> c_int;
    pub fn ci_session_free(s: *mut ci_session);
    pub fn ci_session_restart(s: *mut ci_session) -> c_int;
    pub fn ci_session_errmsg(s: *const ci_session) -> *const c_char;
    pub fn ci_session_workspace(s: *const ci_session) -> *const c_char;
    pub fn ci_session_sandbox(s: *const ci_session) -> c_uint;
    pub fn ci_session_pid(s: *const ci_session) -> c_int;
    pub fn ci_session_put_file(
        s: *mut ci_session,
        name: *const c_char,
        data: *const c_void,
        len: usize,
    ) -> c_int;
    pub fn ci_session_get_file(
        s: *mut ci_session,
        name: *const c_char,
        data: *mut *mut c_void,
        len: *mut usize,
    ) -> c_int;
    pub fn ci_session_get_file_max(
        s: *mut ci_session,
        name: *const c_char,
        max: ci_uint64,
        data: *mut *mut c_void,
        len: *mut usize,
    ) -> c_int;
    pub fn ci_free(p: *mut c_void);
    pub fn ci_session_interrupt(s: *mut ci_session) -> c_int;

    pub fn ci_session_snapshot(s: *mut ci_session, data: *mut *mut c_void, len: *mut usize)
        -> c_int;
    pub fn ci_session_restore(
        out: *mut *mut ci_session,
        cfg: *const ci_config,
        data: *const c_void,
        len: usize,
    ) -> c_int;
    /// The branch runs with @s's config, host functions and event
    /// function included: their payloads are shared with @s's and must
    /// outlive both sessions.
    pub fn ci_session_fork(s: *mut ci_session, out: *mut *mut ci_session) -> c_int;
    pub fn ci_session_left_out(s: *const ci_session) -> *const c_char;
    pub fn ci_session_rollback_active(s: *const ci_session) -> c_int;
    pub fn ci_snapshot_left_out(data: *const c_void, len: usize, list: *mut *mut c_char) -> c_int;

    pub fn ci_run(s: *mut ci_session, code: *const c_char, out: *mut *mut ci_result) -> c_int;
    pub fn ci_run_stream(
        s: *mut ci_session,
        code: *const c_char,
        func: ci_output_fn,
        payload: *mut c_void,
        out: *mut *mut ci_result,
    ) -> c_int;
    pub fn ci_run_options_init(opts: *mut ci_run_options, version: c_uint) -> c_int;
    pub fn ci_run_ex(
        s: *mut ci_session,
        code: *const c_char,
        opts: *const ci_run_options,
        out: *mut *mut ci_result,
    ) -> c_int;

    pub fn ci_result_free(r: *mut ci_result);
    pub fn ci_result_status(r: *const ci_result) -> ci_status;
    pub fn ci_result_stdout(r: *const ci_result, len: *mut usize) -> *const c_char;
    pub fn ci_result_stderr(r: *const ci_result, len: *mut usize) -> *const c_char;
    pub fn ci_result_truncated(r: *const ci_result) -> c_int;
    pub fn ci_result_rolled_back(r: *const ci_result) -> c_int;
    pub fn ci_result_spill_file(r: *const ci_result, stream: c_int, whole: *mut c_int) -> *const c_char;
    pub fn ci_result_cut(
        r: *const ci_result,
        stream: c_int,
        at: *mut usize,
        len: *mut usize,
        bytes: *mut u64,
        lines: *mut u64,
    ) -> c_int;
    pub fn ci_result_value(r: *const ci_result) -> *const c_char;
    pub fn ci_result_error_name(r: *const ci_result) -> *const c_char;
    pub fn ci_result_error_value(r: *const ci_result) -> *const c_char;
    pub fn ci_result_traceback(r: *const ci_result) -> *const c_char;
    pub fn ci_result_traceback_full(r: *const ci_result) -> *const c_char;
    pub fn ci_result_output_count(r: *const ci_result) -> usize;
    pub fn ci_result_output_mime(r: *const ci_result, i: usize) -> *const c_char;
    pub fn ci_result_output_data(r: *const ci_result, i: usize, len: *mut usize) -> *const c_void;
    pub fn ci_result_output_type(r: *const ci_result, i: usize) -> ci_output_type;
    pub fn ci_result_output_message(r: *const ci_result, i: usize) -> usize;
    pub fn ci_result_output_display_id(r: *const ci_result, i: usize) -> *const c_char;
    pub fn ci_result_output_wait(r: *const ci_result, i: usize) -> c_int;
    pub fn ci_result_outputs_omitted(r: *const ci_result) -> usize;
    pub fn ci_result_file_count(r: *const ci_result) -> usize;
    pub fn ci_result_file_name(r: *const ci_result, i: usize) -> *const c_char;
    pub fn ci_result_wall_time_us(r: *const ci_result) -> ci_uint64;
    pub fn ci_result_cpu_time_us(r: *const ci_result) -> ci_uint64;
    pub fn ci_result_peak_memory(r: *const ci_result) -> ci_uint64;
    pub fn ci_result_execution_count(r: *const ci_result) -> c_int;
}
