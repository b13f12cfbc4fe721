//! Rust binding of codeinterp: a sandboxed, stateful Python interpreter for
//! AI agents.
//!
//! A [`Session`] owns one sandboxed worker process (CPython with numpy,
//! pandas and matplotlib already imported). [`Session::run`] runs a cell and
//! keeps its state for the next one, as a notebook does, and returns a
//! [`CellResult`]: an owned copy of everything the C library reported, so it
//! outlives the session and borrows nothing.
//!
//! ```no_run
//! use codeinterp::{Config, Session, Status};
//! use std::time::Duration;
//!
//! let mut s = Session::new(Config::new().timeout(Duration::from_secs(10)))?;
//! s.run("import numpy as np\nx = np.arange(10)")?;
//! let r = s.run("print(x.sum())\nx.mean()")?;
//! assert_eq!(r.stdout_lossy(), "45\n");
//! assert_eq!(r.value.as_deref(), Some("4.5"));
//! let r = s.run("1/0")?;
//! assert_eq!(r.status, Status::Error);
//! assert_eq!(r.error.unwrap().name, "ZeroDivisionError");
//! # Ok::<(), codeinterp::Error>(())
//! ```
//!
//! A cell's fate (an exception, a timeout, a killed worker) is not an
//! [`Error`]: the call succeeds and [`CellResult::status`] says what became
//! of the cell. [`Error`] is for calls the library refused or could not
//! carry out (a dead worker, a missing file, a bad argument).
//!
//! The raw C API is in [`sys`].

use std::any::Any;
use std::borrow::Cow;
use std::ffi::{CStr, CString, OsStr};
use std::fmt;
use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_void};
use std::os::unix::ffi::OsStrExt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::ptr;
use std::slice;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The raw declarations of `include/codeinterp.h`: the `codeinterp-sys`
/// crate, re-exported.
pub use codeinterp_sys as sys;

mod functions;
pub use functions::{FunctionError, HostFn};

mod snapshot;
pub use snapshot::snapshot_left_out;

/// The version of the C library the program runs with ("0.1.0").
pub fn version() -> &'static str {
    // SAFETY: ci_version returns a static, NUL-terminated ASCII string.
    unsafe { CStr::from_ptr(sys::ci_version()) }
        .to_str()
        .unwrap_or("")
}

// ------------------------------------------------------------------ errors

/// What kind of failure an [`Error`] is: the C library's `CI_E*` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// `CI_EINVAL`: an argument was refused (also: a NUL byte in a string
    /// passed to C, or a zero timeout).
    InvalidArgument,
    /// `CI_ENOMEM`
    OutOfMemory,
    /// `CI_ESPAWN`: the worker could not be started.
    Spawn,
    /// `CI_EDEAD`: the worker is dead; call [`Session::restart`].
    Dead,
    /// `CI_EBUSY`: a run is already in progress on this session.
    Busy,
    /// `CI_EPROTO`: the worker broke the protocol.
    Protocol,
    /// `CI_EIO`
    Io,
    /// `CI_ENOENT`: no such file in the workspace.
    NotFound,
    /// `CI_ETOOBIG`: size over the limit.
    TooBig,
    /// `CI_EUNSAFE`: a link, or not a regular file.
    Unsafe,
    /// `CI_ESANDBOX`: a required sandbox layer is not available.
    Sandbox,
    /// `CI_EMANIFEST`: the package manifest ([`Config::manifest`]) is
    /// malformed, badly signed, or does not match the installed files, or
    /// a wheelhouse ([`Config::wheelhouse`]) has no manifest or is not a
    /// directory; the detail names the cause.
    Manifest,
    /// A code this binding does not know (from a newer library).
    Other(i32),
}

impl ErrorKind {
    /// The kind of a `CI_E*` code.
    pub fn from_code(code: i32) -> ErrorKind {
        match code {
            sys::CI_EINVAL => ErrorKind::InvalidArgument,
            sys::CI_ENOMEM => ErrorKind::OutOfMemory,
            sys::CI_ESPAWN => ErrorKind::Spawn,
            sys::CI_EDEAD => ErrorKind::Dead,
            sys::CI_EBUSY => ErrorKind::Busy,
            sys::CI_EPROTO => ErrorKind::Protocol,
            sys::CI_EIO => ErrorKind::Io,
            sys::CI_ENOENT => ErrorKind::NotFound,
            sys::CI_ETOOBIG => ErrorKind::TooBig,
            sys::CI_EUNSAFE => ErrorKind::Unsafe,
            sys::CI_ESANDBOX => ErrorKind::Sandbox,
            sys::CI_EMANIFEST => ErrorKind::Manifest,
            other => ErrorKind::Other(other),
        }
    }

    /// The `CI_E*` code.
    pub fn code(self) -> i32 {
        match self {
            ErrorKind::InvalidArgument => sys::CI_EINVAL,
            ErrorKind::OutOfMemory => sys::CI_ENOMEM,
            ErrorKind::Spawn => sys::CI_ESPAWN,
            ErrorKind::Dead => sys::CI_EDEAD,
            ErrorKind::Busy => sys::CI_EBUSY,
            ErrorKind::Protocol => sys::CI_EPROTO,
            ErrorKind::Io => sys::CI_EIO,
            ErrorKind::NotFound => sys::CI_ENOENT,
            ErrorKind::TooBig => sys::CI_ETOOBIG,
            ErrorKind::Unsafe => sys::CI_EUNSAFE,
            ErrorKind::Sandbox => sys::CI_ESANDBOX,
            ErrorKind::Manifest => sys::CI_EMANIFEST,
            ErrorKind::Other(code) => code,
        }
    }
}

/// A failed call: the method that failed, the `CI_E*` code, its message
/// (`ci_strerror`) and the detail of this failure: the refused argument and
/// why, or the detail the C library recorded (`ci_session_errmsg`). Both
/// are in this crate's terms: the C functions they name are given as the
/// crate's methods (`call Session::restart`).
///
/// Displays as `"op: message: detail"`, without the detail when there is
/// none: `Session::get_file: invalid argument: name "../x" has a ".."
/// component: a name is a path relative to the workspace, without empty,
/// "." or ".." components`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    op: &'static str,
    kind: ErrorKind,
    message: String,
    detail: String,
}

impl Error {
    fn new(op: &'static str, code: c_int, detail: String) -> Error {
        Error {
            op,
            kind: ErrorKind::from_code(code),
            message: rust_names(&strerror(code)),
            detail: rust_names(&detail),
        }
    }

    /// An error of @op with the detail the C library recorded on @s (NULL:
    /// the calling thread's last failed ci_session_new(),
    /// ci_session_restore() or ci_snapshot_left_out()).
    ///
    /// # Safety
    /// @s is NULL or a live session not in use by another thread.
    unsafe fn from_session(op: &'static str, code: c_int, s: *const sys::ci_session) -> Error {
        Error::new(op, code, cstr_lossy(sys::ci_session_errmsg(s)).unwrap_or_default())
    }

    fn invalid(op: &'static str, detail: String) -> Error {
        Error::new(op, sys::CI_EINVAL, detail)
    }

    /// The call that failed: `"Session::new"`, `"Session::get_file"`,
    /// `"Session::restore"`, `"snapshot_left_out"`...
    pub fn op(&self) -> &str {
        self.op
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The `CI_E*` code (negative).
    pub fn code(&self) -> i32 {
        self.kind.code()
    }

    /// The code's static message, as `ci_strerror` gives it (with
    /// `Session::restart` for the `ci_session_restart` it names).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What went wrong this time; may be empty.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.op, self.message)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// A `Result` whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// The Rust for each C function a message of the library may name.
const RUST_NAMES: &[(&str, &str)] = &[
    ("ci_session_new", "Session::new"),
    ("ci_session_restart", "Session::restart"),
    ("ci_session_interrupt", "Interrupter::interrupt"),
    ("ci_session_put_file", "Session::put_file"),
    ("ci_session_get_file", "Session::get_file"),
    ("ci_run", "Session::run"),
    ("ci_run_ex", "Session::run_with"),
    ("ci_run_stream", "Session::run_with"),
    ("ci_session_snapshot", "Session::snapshot"),
    ("ci_session_restore", "Session::restore"),
    ("ci_session_fork", "Session::fork"),
    ("ci_session_left_out", "Session::left_out"),
    ("ci_snapshot_left_out", "snapshot_left_out"),
];

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The length of the identifier at the start of @s.
fn word_len(s: &str) -> usize {
    s.bytes().position(|b| !is_word_byte(b)).unwrap_or(s.len())
}

/// A message of the library in this crate's terms: without the leading
/// "ci_session_get_file: " some have (the error's op names the call), and
/// with `Session::restart` where it says `ci_session_restart`.
fn rust_names(msg: &str) -> String {
    let mut rest = msg;
    if rest.starts_with("ci_") && rest[word_len(rest)..].starts_with(": ") {
        rest = &rest[word_len(rest) + 2..];
    }
    let mut out = String::with_capacity(rest.len());
    while let Some(i) = rest.find("ci_") {
        let end = i + word_len(&rest[i..]);
        let word = &rest[i..end];
        let starts_word = i == 0 || !is_word_byte(rest.as_bytes()[i - 1]);
        out.push_str(&rest[..i]);
        match RUST_NAMES.iter().find(|(c, _)| *c == word) {
            Some((_, r)) if starts_word => out.push_str(r),
            _ => out.push_str(word),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn strerror(code: c_int) -> String {
    // SAFETY: ci_strerror returns a static string for any code.
    unsafe { cstr_lossy(sys::ci_strerror(code)) }.unwrap_or_default()
}

/// Copies a NUL-terminated C string, or None for NULL.
///
/// # Safety
/// @p is NULL or points to a NUL-terminated string.
unsafe fn cstr_lossy(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        Some(CStr::from_ptr(p).to_string_lossy().into_owned())
    }
}

/// Copies @len bytes at @p (NULL or 0: empty).
///
/// # Safety
/// @p is NULL or points to @len readable bytes.
unsafe fn bytes(p: *const c_void, len: usize) -> Vec<u8> {
    if p.is_null() || len == 0 {
        Vec::new()
    } else {
        slice::from_raw_parts(p as *const u8, len).to_vec()
    }
}

fn c_string(op: &'static str, what: &str, bytes: &[u8]) -> Result<CString> {
    CString::new(bytes).map_err(|e| {
        Error::invalid(
            op,
            format!("{} holds a NUL byte at offset {}", what, e.nul_position()),
        )
    })
}

fn path_c_string(op: &'static str, what: &str, path: &Path) -> Result<CString> {
    c_string(op, what, path.as_os_str().as_bytes())
}

/// @bytes as a message shows an argument: quoted, cut to 100 bytes.
fn shown(bytes: &[u8]) -> String {
    if bytes.len() > 100 {
        format!("{:?}... ({} bytes)", String::from_utf8_lossy(&bytes[..100]), bytes.len())
    } else {
        format!("{:?}", String::from_utf8_lossy(bytes))
    }
}

/// The longest workspace file name the library takes (PATH_MAX - 1).
const MAX_NAME_BYTES: usize = 4095;

/// What is wrong with the workspace file name @b by the library's rule,
/// or None.
fn name_problem(b: &[u8]) -> Option<String> {
    if b.is_empty() {
        return Some("is empty".to_string());
    }
    if b.len() > MAX_NAME_BYTES {
        return Some(format!("is over {} bytes", MAX_NAME_BYTES));
    }
    if b[0] == b'/' {
        return Some("is absolute".to_string());
    }
    b.split(|&c| c == b'/').find_map(|part| match part {
        b"" => Some("has an empty component (\"//\" or a trailing \"/\")".to_string()),
        b"." | b".." => Some(format!("has a {:?} component", String::from_utf8_lossy(part))),
        _ => None,
    })
}

/// A workspace file name for C, checked by the library's rule first so
/// that the error can say what is wrong with it.
fn name_c_string(op: &'static str, name: &Path) -> Result<CString> {
    let b = name.as_os_str().as_bytes();
    let c = c_string(op, &format!("name {}", shown(b)), b)?;
    match name_problem(b) {
        None => Ok(c),
        Some(problem) => Err(Error::invalid(
            op,
            format!(
                "name {} {}: a name is a path relative to the workspace, without empty, \".\" \
                 or \"..\" components",
                shown(b),
                problem
            ),
        )),
    }
}

/// Whole milliseconds for C, rounded up (so 1 µs is 1 ms, not "unset");
/// saturates past `c_ulong` (the library then refuses the value).
fn millis(d: Duration) -> c_ulong {
    let ms = d.as_millis() + u128::from(d.subsec_nanos() % 1_000_000 != 0);
    if ms > c_ulong::MAX as u128 {
        c_ulong::MAX
    } else {
        ms as c_ulong
    }
}

// ------------------------------------------------------------------- flags

/// The names of @bits's set bits joined by "|" ("seccomp|landlock"),
/// "none" for no bit, a bit @names lacks in hex ("0x800").
fn bit_names(f: &mut fmt::Formatter<'_>, bits: u32, names: &[(u32, &str)]) -> fmt::Result {
    if bits == 0 {
        return f.write_str("none");
    }
    let mut rest = bits;
    let mut sep = "";
    for &(bit, name) in names {
        if rest & bit != 0 {
            write!(f, "{}{}", sep, name)?;
            rest &= !bit;
            sep = "|";
        }
    }
    if rest != 0 {
        write!(f, "{}{:#x}", sep, rest)?;
    }
    Ok(())
}

/// A set of sandbox layers (the `CI_SANDBOX_*` bits): what
/// [`Session::sandbox`] reports and [`Config::require_sandbox`] demands.
/// See the C header for what each layer does.
///
/// Displays as the layers' names, the bits' in lower case, joined by "|":
/// `seccomp|rlimits|no_new_privs|landlock|unprivileged|userns|netns|ipcns|utsns|mntns|pidns|task_limit|disk_quota`,
/// `none` for no layer; `{:?}` wraps that in `Sandbox(...)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Sandbox(pub u32);

const SANDBOX_NAMES: &[(u32, &str)] = &[
    (sys::CI_SANDBOX_SECCOMP, "seccomp"),
    (sys::CI_SANDBOX_RLIMITS, "rlimits"),
    (sys::CI_SANDBOX_NO_NEW_PRIVS, "no_new_privs"),
    (sys::CI_SANDBOX_LANDLOCK, "landlock"),
    (sys::CI_SANDBOX_UNPRIVILEGED, "unprivileged"),
    (sys::CI_SANDBOX_USERNS, "userns"),
    (sys::CI_SANDBOX_NETNS, "netns"),
    (sys::CI_SANDBOX_IPCNS, "ipcns"),
    (sys::CI_SANDBOX_UTSNS, "utsns"),
    (sys::CI_SANDBOX_MNTNS, "mntns"),
    (sys::CI_SANDBOX_PIDNS, "pidns"),
    (sys::CI_SANDBOX_TASK_LIMIT, "task_limit"),
    (sys::CI_SANDBOX_DISK_QUOTA, "disk_quota"),
];

impl fmt::Display for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        bit_names(f, self.0, SANDBOX_NAMES)
    }
}

impl fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sandbox({})", self)
    }
}

impl Sandbox {
    pub const SECCOMP: Sandbox = Sandbox(sys::CI_SANDBOX_SECCOMP);
    pub const RLIMITS: Sandbox = Sandbox(sys::CI_SANDBOX_RLIMITS);
    pub const NO_NEW_PRIVS: Sandbox = Sandbox(sys::CI_SANDBOX_NO_NEW_PRIVS);
    pub const LANDLOCK: Sandbox = Sandbox(sys::CI_SANDBOX_LANDLOCK);
    pub const UNPRIVILEGED: Sandbox = Sandbox(sys::CI_SANDBOX_UNPRIVILEGED);
    pub const USERNS: Sandbox = Sandbox(sys::CI_SANDBOX_USERNS);
    pub const NETNS: Sandbox = Sandbox(sys::CI_SANDBOX_NETNS);
    pub const IPCNS: Sandbox = Sandbox(sys::CI_SANDBOX_IPCNS);
    pub const UTSNS: Sandbox = Sandbox(sys::CI_SANDBOX_UTSNS);
    pub const MNTNS: Sandbox = Sandbox(sys::CI_SANDBOX_MNTNS);
    /// Best effort: a PID namespace of the worker's own, in which it is
    /// pid 1. Only a worker forked from the zygote gets one, never a worker
    /// started by exec ([`Config::zygote`] off, or `$CODEINTERP_WORKER`
    /// set): requiring it of such a session fails with
    /// [`ErrorKind::Sandbox`].
    pub const PIDNS: Sandbox = Sandbox(sys::CI_SANDBOX_PIDNS);
    /// Best effort: RLIMIT_NPROC at the task limit ([`Config::task_limit`])
    /// counted in the worker's own user namespace; set only with
    /// [`Sandbox::USERNS`].
    pub const TASK_LIMIT: Sandbox = Sandbox(sys::CI_SANDBOX_TASK_LIMIT);
    /// Best effort: the session directory as a tmpfs of the disk and inode
    /// quotas ([`Config::disk_quota`]), which only a host that may mount
    /// (root) has.
    pub const DISK_QUOTA: Sandbox = Sandbox(sys::CI_SANDBOX_DISK_QUOTA);
    /// Every layer this crate knows.
    pub const ALL: Sandbox = Sandbox(
        sys::CI_SANDBOX_SECCOMP
            | sys::CI_SANDBOX_RLIMITS
            | sys::CI_SANDBOX_NO_NEW_PRIVS
            | sys::CI_SANDBOX_LANDLOCK
            | sys::CI_SANDBOX_UNPRIVILEGED
            | sys::CI_SANDBOX_USERNS
            | sys::CI_SANDBOX_NETNS
            | sys::CI_SANDBOX_IPCNS
            | sys::CI_SANDBOX_UTSNS
            | sys::CI_SANDBOX_MNTNS
            | sys::CI_SANDBOX_PIDNS
            | sys::CI_SANDBOX_TASK_LIMIT
            | sys::CI_SANDBOX_DISK_QUOTA,
    );
    /// The library's default requirement: seccomp, rlimits, no_new_privs.
    pub const DEFAULT_REQUIRED: Sandbox = Sandbox(
        sys::CI_SANDBOX_SECCOMP | sys::CI_SANDBOX_RLIMITS | sys::CI_SANDBOX_NO_NEW_PRIVS,
    );

    /// The raw bits.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Whether every layer of @other is in this set.
    pub fn contains(self, other: Sandbox) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Sandbox {
    type Output = Sandbox;
    fn bitor(self, rhs: Sandbox) -> Sandbox {
        Sandbox(self.0 | rhs.0)
    }
}

/// What was cut or left out of a result (the `CI_TRUNCATED_*` bits).
/// Displays as the bits' names joined by "|" (`stdout|files`, `none`);
/// `{:?}` wraps that in `Truncated(...)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Truncated(pub u32);

const TRUNCATED_NAMES: &[(u32, &str)] = &[
    (sys::CI_TRUNCATED_STDOUT as u32, "stdout"),
    (sys::CI_TRUNCATED_STDERR as u32, "stderr"),
    (sys::CI_TRUNCATED_TEXT as u32, "text"),
    (sys::CI_TRUNCATED_OUTPUTS as u32, "outputs"),
    (sys::CI_TRUNCATED_FILES as u32, "files"),
];

impl fmt::Display for Truncated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        bit_names(f, self.0, TRUNCATED_NAMES)
    }
}

impl fmt::Debug for Truncated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Truncated({})", self)
    }
}

impl Truncated {
    /// stdout reached the output limit.
    pub const STDOUT: Truncated = Truncated(sys::CI_TRUNCATED_STDOUT as u32);
    /// stderr reached the output limit.
    pub const STDERR: Truncated = Truncated(sys::CI_TRUNCATED_STDERR as u32);
    /// The value's repr, the error message or the traceback was cut.
    pub const TEXT: Truncated = Truncated(sys::CI_TRUNCATED_TEXT as u32);
    /// Rich outputs were left out ([`CellResult::outputs_omitted`]).
    pub const OUTPUTS: Truncated = Truncated(sys::CI_TRUNCATED_OUTPUTS as u32);
    /// The list of changed files is incomplete.
    pub const FILES: Truncated = Truncated(sys::CI_TRUNCATED_FILES as u32);

    /// The raw bits.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// Whether every bit of @other is set.
    pub fn contains(self, other: Truncated) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether anything at all was cut.
    pub fn any(self) -> bool {
        self.0 != 0
    }
}

// ------------------------------------------------------------------ config

/// Settings of a session, applied by [`Session::new`] and
/// [`Session::restore`], and kept by the session (a clone) for
/// [`Session::fork`]. Anything left unset keeps the C library's default
/// (given at each setter).
///
/// ```no_run
/// # use codeinterp::{Config, Session};
/// # use std::time::Duration;
/// let cfg = Config::new()
///     .timeout(Duration::from_secs(10))
///     .memory_limit(1 << 30)
///     .figure_dpi(72);
/// let session = Session::new(cfg)?;
/// # Ok::<(), codeinterp::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Config {
    timeout: Option<Duration>,
    grace: Option<Duration>,
    startup_timeout: Option<Duration>,
    memory_limit: Option<u64>,
    output_limit: Option<usize>,
    spill_limit: Option<u64>,
    display_limits: Option<(usize, usize)>,
    figure_dpi: Option<u32>,
    file_limit: Option<u64>,
    task_limit: Option<u32>,
    disk_quota: Option<u64>,
    inode_quota: Option<u64>,
    workspace_root: Option<PathBuf>,
    preload: Option<String>,
    zygote: Option<bool>,
    rollback: Option<bool>,
    require_sandbox: Option<Sandbox>,
    manifest: Option<(PathBuf, ManifestKey)>,
    wheelhouse: Option<PathBuf>,
    functions: Vec<functions::Definition>,
    call_limits: Option<(usize, usize)>,
    urls: Vec<(String, Vec<UrlHeader>)>,
    url_limits: Option<(usize, usize, Duration)>,
    audit_log: Option<PathBuf>,
    events: Option<EventHandler>,
}

/// The closure of [`Config::on_event`]: each audit event's JSON line,
/// `true` if it took it.
pub type EventFn = dyn Fn(&str) -> bool + Send + Sync;

#[derive(Clone)]
struct EventHandler(Arc<EventFn>);

impl fmt::Debug for EventHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventHandler(..)")
    }
}

/// The C payload of a session's event closure, boxed so that it does not
/// move, and kept by the Session until its worker is freed.
struct EventSlot(Arc<EventFn>);

/// The ci_event_fn of every session with [`Config::on_event`]: 0 when the
/// closure took the line; a panic is caught and counts as a refusal.
unsafe extern "C" fn event_trampoline(line: *const c_char, len: usize, payload: *mut c_void) -> c_int {
    // SAFETY: the payload is the EventSlot the Session owns, alive until
    // after ci_session_free; the line is len bytes of the library's.
    let slot = &*(payload as *const EventSlot);
    let text = String::from_utf8_lossy(slice::from_raw_parts(line as *const u8, len));
    match panic::catch_unwind(AssertUnwindSafe(|| (slot.0)(&text))) {
        Ok(true) => 0,
        _ => -1,
    }
}

/// A header the host adds to a prefix's requests: a credential, so its
/// Debug form never shows it.
#[derive(Clone)]
struct UrlHeader(String);

impl fmt::Debug for UrlHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UrlHeader(..)")
    }
}

/// The public key a manifest must have been signed with.
#[derive(Debug, Clone)]
enum ManifestKey {
    File(PathBuf),
    Bytes(Vec<u8>),
}

/// The length of the public key [`Config::manifest_key`] takes: an
/// Ed25519 public key.
pub const MANIFEST_KEY_LEN: usize = 32;

impl Config {
    /// The defaults.
    pub fn new() -> Config {
        Config::default()
    }

    /// Wall-clock limit of one run (default 30 s); at the limit the cell is
    /// interrupted and its status is [`Status::Timeout`]. Rounded up to
    /// whole milliseconds; at most 24 h.
    pub fn timeout(mut self, d: Duration) -> Config {
        self.timeout = Some(d);
        self
    }

    /// How long an interrupted cell has to give way before the worker is
    /// killed (default 2 s, at most 10 min).
    pub fn grace(mut self, d: Duration) -> Config {
        self.grace = Some(d);
        self
    }

    /// How long starting (and restarting) waits for the worker to be ready
    /// (default 60 s, at most 10 min).
    pub fn startup_timeout(mut self, d: Duration) -> Config {
        self.startup_timeout = Some(d);
        self
    }

    /// The worker's address-space limit in bytes (default 2 GiB, at least
    /// 512 MiB).
    pub fn memory_limit(mut self, bytes: u64) -> Config {
        self.memory_limit = Some(bytes);
        self
    }

    /// How many bytes of stdout, and of stderr, one run keeps (default
    /// 1 MiB; 1 KiB to 256 MiB). A stream that passes it keeps its head and
    /// its tail, with a marker line between them that says what was left
    /// out and where the whole stream is ([`CellResult::spill_file`]).
    /// Also caps the value and error texts.
    pub fn output_limit(mut self, bytes: usize) -> Config {
        self.output_limit = Some(bytes);
        self
    }

    /// The largest spill file, in bytes (default 16 MiB; 0 keeps none,
    /// else 1 KiB to 4 GiB). A stream that passes the output limit is
    /// written whole, up to this many bytes, to `.outputs/cell-N.stdout`
    /// (or `.stderr`) in the workspace, which [`CellResult::spill_file`]
    /// names; a session keeps the spill files of its last 8 cut streams.
    pub fn spill_limit(mut self, bytes: u64) -> Config {
        self.spill_limit = Some(bytes);
        self
    }

    /// Caps on rich outputs, in bytes: one output, and a run's outputs
    /// together (defaults 16 MiB and 64 MiB).
    pub fn display_limits(mut self, per_output: usize, per_run: usize) -> Config {
        self.display_limits = Some((per_output, per_run));
        self
    }

    /// The resolution of matplotlib figures rendered to image/png (default
    /// 100; 10 to 600).
    pub fn figure_dpi(mut self, dpi: u32) -> Config {
        self.figure_dpi = Some(dpi);
        self
    }

    /// The largest file a cell may write, and that
    /// [`Session::put_file`]/[`Session::get_file`] move (default 1 GiB).
    pub fn file_limit(mut self, bytes: u64) -> Config {
        self.file_limit = Some(bytes);
        self
    }

    /// The most processes and threads a session's worker may have at once
    /// (default 256, 16 to 65536); past it a cell's new thread fails.
    pub fn task_limit(mut self, tasks: u32) -> Config {
        self.task_limit = Some(tasks);
        self
    }

    /// The most bytes the session's directory holds (default 512 MiB; 0 for
    /// none), a tmpfs of its own that a root host mounts; past it a cell
    /// gets ENOSPC and [`Session::put_file`] fails with
    /// [`ErrorKind::TooBig`].
    pub fn disk_quota(mut self, bytes: u64) -> Config {
        self.disk_quota = Some(bytes);
        self
    }

    /// The most files and directories the session's directory holds
    /// (default 65536), with the disk quota.
    pub fn inode_quota(mut self, inodes: u64) -> Config {
        self.inode_quota = Some(inodes);
        self
    }

    /// The directory under which each session makes its own directory
    /// (default `$TMPDIR`, else /tmp); absolute.
    pub fn workspace_root<P: AsRef<Path>>(mut self, dir: P) -> Config {
        self.workspace_root = Some(dir.as_ref().to_path_buf());
        self
    }

    /// A file the host appends one JSON line to for each event of the
    /// session: its start (sandbox layers, limits, manifest), each cell
    /// (SHA-256, status, times, changed files), each
    /// [`Session::put_file`] and [`Session::get_file`], each host function
    /// call, each refusal of the sandbox (a system call, a path, a
    /// socket), restarts, kills and its end, each line chained to the one before by SHA-256
    /// (`codeinterp-audit verify FILE` checks it; docs/audit-log.md is the
    /// schema). The log fails closed: [`Session::new`] fails with
    /// [`ErrorKind::Io`], the detail naming the file, when it cannot record
    /// the start; after another event it could not record, runs, puts and
    /// gets fail with [`ErrorKind::Io`] until a restart is recorded. See
    /// `ci_config_set_audit_log(3)`.
    pub fn audit_log<P: AsRef<Path>>(mut self, path: P) -> Config {
        self.audit_log = Some(path.as_ref().to_path_buf());
        self
    }

    /// Also hands each audit event's line (the JSON object, without the
    /// newline, exactly as [`Config::audit_log`]'s file gets it, after the
    /// file) to @f, for a host that ships the events elsewhere; without a
    /// file, the chain is kept in memory. @f runs on the thread of the
    /// call that made the event ([`Session::new`], [`Session::run`], the
    /// file calls, the session's drop), one event at a time; it returns
    /// `true` when it took the line. `false`, or a panic (caught, not
    /// resumed), counts as an event that could not be recorded, and the
    /// session fails closed as for the file. @f must not use the session
    /// whose event it is. See `ci_config_set_event_fn(3)`.
    pub fn on_event<F>(mut self, f: F) -> Config
    where
        F: Fn(&str) -> bool + Send + Sync + 'static,
    {
        self.events = Some(EventHandler(Arc::new(f)));
        self
    }

    /// The Python modules the worker imports before the first cell: a
    /// comma-separated list of module names such as
    /// `"numpy,pandas,scipy.stats"` (ASCII identifiers joined by dots, no
    /// spaces, at most 1024 bytes); default
    /// `"numpy,pandas,matplotlib.pyplot"`. matplotlib and
    /// matplotlib.pyplot are imported whatever the list says. A malformed
    /// list makes [`Session::new`] fail with
    /// [`ErrorKind::InvalidArgument`]; a module that fails to import, with
    /// [`ErrorKind::Spawn`] and its traceback in the detail. Each distinct
    /// list gets its own zygote (see [`Config::zygote`]), whose first
    /// session pays its start.
    pub fn preload(mut self, modules: &str) -> Config {
        self.preload = Some(modules.to_string());
        self
    }

    /// Whether the worker is forked from a warm zygote (`true`, the
    /// default: ready in milliseconds once the zygote is up) or started by
    /// fork + exec (`false`: about 0.6 s each, with an address layout and
    /// hash seed of its own). Sessions forked from one zygote share its
    /// address layout (ASLR) and CPython's hash seed; only a worker forked
    /// from the zygote can have a PID namespace of its own
    /// ([`Sandbox::PIDNS`]). See the C header and SECURITY.md for what else
    /// differs. `$CODEINTERP_WORKER` turns the zygote off whatever this says.
    pub fn zygote(mut self, enabled: bool) -> Config {
        self.zygote = Some(enabled);
        self
    }

    /// Whether a cell that kills the worker (its grace period ran out, a
    /// crash in an extension, a sandbox violation, `os._exit()`) leaves
    /// the session as it was just before that cell (`true`) or dead until
    /// [`Session::restart`] (`false`, the default). Such a cell's result
    /// still has [`Status::Killed`] and its error, with
    /// [`CellResult::rolled_back`] set: a checkpoint the worker forked
    /// before the cell (copy on write, about 10 ms a cell for a session
    /// holding 100 MB) has taken its place with every variable and import, so the
    /// next run works at once. Files the cell wrote stay as it left them.
    /// It needs a worker forked from the zygote, in a PID namespace of its
    /// own ([`Sandbox::PIDNS`]): without one the session starts without
    /// rollback and [`Session::rollback_active`] is `false`. See
    /// ci_config_set_rollback in the C header.
    pub fn rollback(mut self, enabled: bool) -> Config {
        self.rollback = Some(enabled);
        self
    }

    /// The sandbox layers without which a session fails to start with
    /// [`ErrorKind::Sandbox`] (default [`Sandbox::DEFAULT_REQUIRED`]).
    pub fn require_sandbox(mut self, layers: Sandbox) -> Config {
        self.require_sandbox = Some(layers);
        self
    }

    /// Limits the worker to the Python packages a signed package manifest
    /// lists, and has their files checked before any cell runs.
    /// @manifest names a manifest that `codeinterp-manifest(1)` made and
    /// signed, @public_key the public key file that must have signed it
    /// (the `NAME.pub` of `codeinterp-manifest keygen NAME`). Both files
    /// are read by [`Session::new`] and [`Session::restart`], which fail
    /// with [`ErrorKind::Manifest`] when the manifest cannot be read, is
    /// malformed or badly signed, or does not match the installed files
    /// (the detail names the cause: the path of a file that cannot be
    /// read, another key, a listed file changed or missing, an unlisted
    /// file present, no Landlock...). The manifest needs Landlock
    /// ([`Sandbox::LANDLOCK`]). An empty path, or one over 4096 bytes,
    /// makes [`Session::new`] fail with [`ErrorKind::InvalidArgument`].
    /// Replaces an earlier [`Config::manifest_key`]. See
    /// `ci_config_set_manifest(3)` and SECURITY.md.
    pub fn manifest<P, K>(mut self, manifest: P, public_key: K) -> Config
    where
        P: AsRef<Path>,
        K: AsRef<Path>,
    {
        self.manifest = Some((
            manifest.as_ref().to_path_buf(),
            ManifestKey::File(public_key.as_ref().to_path_buf()),
        ));
        self
    }

    /// [`Config::manifest`] with the public key given as its
    /// [`MANIFEST_KEY_LEN`] (32) bytes instead of a file; a key of another
    /// length makes [`Session::new`] fail with
    /// [`ErrorKind::InvalidArgument`]. See `ci_config_set_manifest_key(3)`.
    pub fn manifest_key<P: AsRef<Path>>(mut self, manifest: P, public_key: &[u8]) -> Config {
        self.manifest = Some((
            manifest.as_ref().to_path_buf(),
            ManifestKey::Bytes(public_key.to_vec()),
        ));
        self
    }

    /// Lets cells install packages an operator approved: the wheel files
    /// of the directory @dir that the session's signed package manifest
    /// lists, each checked against its SHA-256 (`codeinterp-manifest
    /// create ... --wheelhouse DIR` lists them). In a cell,
    /// `%pip install NAME`, `!pip install NAME` and
    /// `pip.main(["install", NAME])` then install NAME and what it
    /// requires, from those wheels only, into the session's own site
    /// directory. It needs [`Config::manifest`] (or
    /// [`Config::manifest_key`]): [`Session::new`] and [`Session::restart`]
    /// fail with [`ErrorKind::Manifest`], the cause in the detail, for a
    /// wheelhouse without a manifest or one that is not a directory. An
    /// empty path, or one over 4096 bytes, makes [`Session::new`] fail with
    /// [`ErrorKind::InvalidArgument`]. [`Config::no_wheelhouse`] turns it
    /// off again. See `ci_config_set_wheelhouse(3)` and docs/wheelhouse.md.
    pub fn wheelhouse<P: AsRef<Path>>(mut self, dir: P) -> Config {
        self.wheelhouse = Some(dir.as_ref().to_path_buf());
        self
    }

    /// No wheelhouse (the default): undoes an earlier
    /// [`Config::wheelhouse`], so that no cell can install a package.
    pub fn no_wheelhouse(mut self) -> Config {
        self.wheelhouse = None;
        self
    }

    /// Defines a host function the session's cells can call: a builtin
    /// named `name` (also importable: `from codeinterp_host import name`),
    /// whose docstring is `description` ("" for none). A cell's call runs
    /// `f` on the thread in [`Session::run`], one call at a time, with the
    /// call's arguments as JSON text (`{"args":[...],"kwargs":{...}}`);
    /// the JSON text `f` returns is what the call returns, parsed, and a
    /// [`FunctionError`] is raised in the cell instead. The cell waits
    /// meanwhile and its timeout runs on, so an `f` that blocks holds the
    /// run past its timeout (its answer is then dropped and the cell
    /// interrupted). A panic in `f` interrupts the cell, and the run
    /// resumes it once the library has returned. A name the library
    /// refuses makes [`Session::new`] fail with
    /// [`ErrorKind::InvalidArgument`]. See `ci_config_add_function(3)`.
    pub fn function<F>(mut self, name: &str, description: &str, f: F) -> Config
    where
        F: Fn(&str) -> std::result::Result<String, FunctionError> + Send + Sync + 'static,
    {
        self.functions.push(functions::Definition {
            name: name.to_string(),
            description: description.to_string(),
            f: Arc::new(f),
        });
        self
    }

    /// Sets the most bytes of JSON a host function call's arguments and a
    /// function's value may have (default 1 MiB each, 1024 to 64 MiB).
    pub fn call_limits(mut self, args_bytes: usize, result_bytes: usize) -> Config {
        self.call_limits = Some((args_bytes, result_bytes));
        self
    }

    /// Lets cells fetch the http or https URLs under `prefix` (scheme,
    /// host, port and path: `"https://api.example.com/v1/"`) with urllib,
    /// requests or pandas, each request made by the host, which adds
    /// `headers` (`"Authorization: Bearer ..."`) and never shows them to
    /// the cell. Without any prefix a cell has no network. See
    /// ci_config_allow_url(3); a header's value is never in an error.
    pub fn allow_url(mut self, prefix: &str, headers: &[&str]) -> Config {
        let headers = headers.iter().map(|h| UrlHeader((*h).to_owned())).collect();
        self.urls.push((prefix.to_owned(), headers));
        self
    }

    /// Caps one request by URL: its body, its response's body (bytes) and
    /// its time, never past the cell's own timeout (default 16 MiB,
    /// 16 MiB, 30 s).
    pub fn url_limits(mut self, request_bytes: usize, response_bytes: usize, timeout: Duration)
        -> Config {
        self.url_limits = Some((request_bytes, response_bytes, timeout));
        self
    }

    /// A `ci_config` holding these settings, to be freed by the caller.
    /// A setting the library refuses is an error of @op (`Session::new`,
    /// `Session::restore`) that names the setter, the value and what the
    /// library takes.
    fn to_raw(&self, op: &'static str) -> Result<RawConfig> {
        // SAFETY: ci_config_new has no preconditions; RawConfig frees it.
        let cfg = RawConfig(unsafe { sys::ci_config_new() });
        if cfg.0.is_null() {
            return Err(Error::new(op, sys::CI_ENOMEM, String::new()));
        }
        // @rc of the setter called as Config::@setter(@arg); @want is what
        // the library takes.
        let check = |rc: c_int, setter: &str, arg: String, want: &str| -> Result<()> {
            if rc == sys::CI_OK {
                Ok(())
            } else if rc == sys::CI_EINVAL {
                Err(Error::new(
                    op,
                    rc,
                    format!("Config::{}({}) refused: must be {}", setter, arg, want),
                ))
            } else {
                Err(Error::new(op, rc, format!("Config::{}({}) refused", setter, arg)))
            }
        };
        let path = |p: &Path| shown(p.as_os_str().as_bytes());
        const MANIFEST_WANT: &str = "a path of 1 to 4096 bytes, without NUL";
        // SAFETY: cfg.0 is a valid config; strings outlive the calls.
        unsafe {
            if let Some(d) = self.timeout {
                let rc = sys::ci_config_set_timeout_ms(cfg.0, millis(d));
                check(rc, "timeout", format!("{:?}", d), "1 ms to 24 h")?;
            }
            if let Some(d) = self.grace {
                let rc = sys::ci_config_set_grace_ms(cfg.0, millis(d));
                check(rc, "grace", format!("{:?}", d), "1 ms to 10 min")?;
            }
            if let Some(d) = self.startup_timeout {
                let rc = sys::ci_config_set_startup_timeout_ms(cfg.0, millis(d));
                check(rc, "startup_timeout", format!("{:?}", d), "1 ms to 10 min")?;
            }
            if let Some(b) = self.memory_limit {
                let rc = sys::ci_config_set_memory_limit(cfg.0, b);
                let want = "512 MiB (536870912 bytes) to i64::MAX bytes";
                check(rc, "memory_limit", b.to_string(), want)?;
            }
            if let Some(b) = self.output_limit {
                let rc = sys::ci_config_set_output_limit(cfg.0, b);
                let want = "1024 bytes to 256 MiB (268435456 bytes)";
                check(rc, "output_limit", b.to_string(), want)?;
            }
            if let Some(b) = self.spill_limit {
                let rc = sys::ci_config_set_spill_limit(cfg.0, b);
                let want = "0 (no spill files), or 1024 bytes to 4 GiB (4294967296 bytes)";
                check(rc, "spill_limit", b.to_string(), want)?;
            }
            if let Some((one, all)) = self.display_limits {
                let rc = sys::ci_config_set_display_limits(cfg.0, one, all);
                let want = "per_output at least 1024 bytes, per_run from per_output to 1 GiB \
                            (1073741824 bytes)";
                check(rc, "display_limits", format!("{}, {}", one, all), want)?;
            }
            if let Some(dpi) = self.figure_dpi {
                let rc = sys::ci_config_set_figure_dpi(cfg.0, dpi as c_uint);
                check(rc, "figure_dpi", dpi.to_string(), "10 to 600")?;
            }
            if let Some(b) = self.file_limit {
                let rc = sys::ci_config_set_file_limit(cfg.0, b);
                check(rc, "file_limit", b.to_string(), "1 byte to i64::MAX bytes")?;
            }
            if let Some(n) = self.task_limit {
                let rc = sys::ci_config_set_task_limit(cfg.0, n as c_ulong);
                check(rc, "task_limit", n.to_string(), "16 to 65536 tasks")?;
            }
            if let Some(b) = self.disk_quota {
                let rc = sys::ci_config_set_disk_quota(cfg.0, b);
                check(rc, "disk_quota", b.to_string(), "0, or 1 MiB to i64::MAX bytes")?;
            }
            if let Some(n) = self.inode_quota {
                let rc = sys::ci_config_set_inode_quota(cfg.0, n);
                check(rc, "inode_quota", n.to_string(), "64 to 4294967295 inodes")?;
            }
            if let Some(ref dir) = self.workspace_root {
                let c = path_c_string(op, "Config::workspace_root", dir)?;
                let rc = sys::ci_config_set_workspace_root(cfg.0, c.as_ptr());
                let want = "an absolute path of at most 3000 bytes";
                check(rc, "workspace_root", path(dir), want)?;
            }
            if let Some(ref log) = self.audit_log {
                let c = path_c_string(op, "Config::audit_log", log)?;
                let rc = sys::ci_config_set_audit_log(cfg.0, c.as_ptr());
                check(rc, "audit_log", path(log), "a path of 1 to 4096 bytes")?;
            }
            if let Some(ref modules) = self.preload {
                let c = c_string(op, "Config::preload", modules.as_bytes())?;
                let rc = sys::ci_config_set_preload(cfg.0, c.as_ptr());
                let want = "module names such as \"numpy,scipy.stats\": joined by commas, \
                            no spaces, at most 1024 bytes";
                check(rc, "preload", shown(modules.as_bytes()), want)?;
            }
            type SetFlag = unsafe extern "C" fn(*mut sys::ci_config, c_int) -> c_int;
            let flags: [(&str, Option<bool>, SetFlag); 2] = [
                ("zygote", self.zygote, sys::ci_config_set_zygote),
                ("rollback", self.rollback, sys::ci_config_set_rollback),
            ];
            for (name, flag, set) in flags {
                if let Some(on) = flag {
                    check(set(cfg.0, c_int::from(on)), name, on.to_string(), "true or false")?;
                }
            }
            if let Some(mask) = self.require_sandbox {
                let rc = sys::ci_config_require_sandbox(cfg.0, mask.0 as c_uint);
                let want = format!("made of the layers this library knows: {}", Sandbox::ALL);
                check(rc, "require_sandbox", mask.to_string(), &want)?;
            }
            if let Some((args, result)) = self.call_limits {
                let rc = sys::ci_config_set_call_limits(cfg.0, args, result);
                let want = "each 1024 bytes to 64 MiB (67108864 bytes)";
                check(rc, "call_limits", format!("{}, {}", args, result), want)?;
            }
            for (prefix, headers) in &self.urls {
                let p = c_string(op, "Config::allow_url's prefix", prefix.as_bytes())?;
                let rc = sys::ci_config_allow_url(cfg.0, p.as_ptr());
                let want = "an http or https URL without userinfo, query or fragment";
                check(rc, "allow_url", shown(prefix.as_bytes()), want)?;
                for (i, h) in headers.iter().enumerate() {
                    let c = c_string(op, "Config::allow_url's header", h.0.as_bytes())?;
                    let rc = sys::ci_config_set_url_header(cfg.0, p.as_ptr(), c.as_ptr());
                    let arg = format!("{}, header {}", shown(prefix.as_bytes()), i);
                    let want = "one \"Name: value\" line of at most 8192 bytes, without CR or LF";
                    check(rc, "allow_url", arg, want)?;
                }
            }
            if let Some((request, response, timeout)) = self.url_limits {
                let rc = sys::ci_config_set_url_limits(cfg.0, request, response, millis(timeout));
                let want = "sizes of 1 byte to 256 MiB (268435456 bytes), a timeout of 1 ms to 1 h";
                check(rc, "url_limits", format!("{}, {}, {:?}", request, response, timeout), want)?;
            }
            match self.manifest {
                None => {}
                Some((ref manifest, ManifestKey::File(ref key))) => {
                    let c = path_c_string(op, "Config::manifest's path", manifest)?;
                    let k = path_c_string(op, "Config::manifest's public key path", key)?;
                    let rc = sys::ci_config_set_manifest(cfg.0, c.as_ptr(), k.as_ptr());
                    let arg = format!("{}, {}", path(manifest), path(key));
                    check(rc, "manifest", arg, "two paths of 1 to 4096 bytes")?;
                }
                Some((ref manifest, ManifestKey::Bytes(ref key))) => {
                    let arg = format!("{}, {} bytes", path(manifest), key.len());
                    if key.len() != MANIFEST_KEY_LEN {
                        return Err(Error::invalid(
                            op,
                            format!(
                                "Config::manifest_key({}) refused: the public key must be {} \
                                 bytes (an Ed25519 public key)",
                                arg, MANIFEST_KEY_LEN
                            ),
                        ));
                    }
                    let c = path_c_string(op, "Config::manifest_key's path", manifest)?;
                    let rc = sys::ci_config_set_manifest_key(
                        cfg.0,
                        c.as_ptr(),
                        key.as_ptr(),
                        key.len(),
                    );
                    check(rc, "manifest_key", arg, MANIFEST_WANT)?;
                }
            }
            if let Some(ref dir) = self.wheelhouse {
                let c = path_c_string(op, "Config::wheelhouse", dir)?;
                let rc = sys::ci_config_set_wheelhouse(cfg.0, c.as_ptr());
                check(rc, "wheelhouse", path(dir), MANIFEST_WANT)?;
            }
        }
        Ok(cfg)
    }
}

struct RawConfig(*mut sys::ci_config);

impl Drop for RawConfig {
    fn drop(&mut self) {
        // SAFETY: a config from ci_config_new, freed once; NULL is a no-op.
        unsafe { sys::ci_config_free(self.0) }
    }
}

// ------------------------------------------------------------------ result

/// What happened to a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// It ran to the end.
    Ok,
    /// It raised an exception (see [`CellResult::error`]).
    Error,
    /// It reached the timeout and was interrupted; the state is intact.
    Timeout,
    /// It ran out of memory (MemoryError at the limit); the state is intact.
    Memory,
    /// The worker died; the session is dead until [`Session::restart`].
    Killed,
    /// An [`Interrupter`] stopped it (KeyboardInterrupt); the state is
    /// intact.
    Interrupted,
    /// A status this binding does not know (from a newer library).
    Other(i32),
}

impl Status {
    /// The `ci_status` value.
    pub fn code(self) -> i32 {
        match self {
            Status::Ok => sys::CI_STATUS_OK,
            Status::Error => sys::CI_STATUS_ERROR,
            Status::Timeout => sys::CI_STATUS_TIMEOUT,
            Status::Memory => sys::CI_STATUS_MEMORY,
            Status::Killed => sys::CI_STATUS_KILLED,
            Status::Interrupted => sys::CI_STATUS_INTERRUPTED,
            Status::Other(code) => code,
        }
    }

    fn from_raw(s: sys::ci_status) -> Status {
        match s {
            sys::CI_STATUS_OK => Status::Ok,
            sys::CI_STATUS_ERROR => Status::Error,
            sys::CI_STATUS_TIMEOUT => Status::Timeout,
            sys::CI_STATUS_MEMORY => Status::Memory,
            sys::CI_STATUS_KILLED => Status::Killed,
            sys::CI_STATUS_INTERRUPTED => Status::Interrupted,
            other => Status::Other(other),
        }
    }
}

/// Displays as the status's one-word name, as `ci_status_name` gives it:
/// `ok`, `error`, `timeout`, `memory`, `killed`, `interrupted`; a status
/// this crate does not know as `unknown(N)`.
impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: ci_status_name returns a static string for any value.
        let name = unsafe { CStr::from_ptr(sys::ci_status_name(self.code())) };
        match name.to_str() {
            Ok("unknown") | Err(_) => write!(f, "unknown({})", self.code()),
            Ok(name) => f.write_str(name),
        }
    }
}

/// The exception a cell raised, or for a killed worker how it died.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellError {
    /// The class name ("ZeroDivisionError"; "TimeoutError",
    /// "KeyboardInterrupt", "MemoryError"); for a killed worker
    /// "WorkerDied", "SandboxViolation", "CPULimitExceeded" (the kernel
    /// killed it at the CPU limit), "ProtocolError", "TimeoutError"
    /// (it did not stop within the grace period after the timeout) or
    /// "KeyboardInterrupt" (nor after [`Interrupter::interrupt`]): one name
    /// per fate, whether the cell stopped or was killed, the status telling
    /// which.
    pub name: String,
    /// str(exception), or a sentence saying how the worker died.
    pub value: String,
    /// The traceback as Python prints it, showing the cell's own frames
    /// (`File "<cell N>"`). Between the cell's frames and the frame that
    /// raised, each run of other code's frames (the standard library's, a
    /// package's) is folded into one line that counts them and names their
    /// files: `    ... 7 frames in urllib/request.py, http/client.py ...`.
    pub traceback: Option<String>,
    /// The same traceback with nothing folded: every frame but the
    /// worker's. The same text as `traceback` when nothing was folded, and
    /// None exactly when it is.
    pub traceback_full: Option<String>,
}

/// Jupyter's output_type of the message an [`Output`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputKind {
    /// A display() call or a matplotlib figure.
    DisplayData,
    /// The cell's last expression, when it has rich representations.
    ExecuteResult,
    /// New representations for the displays of [`Output::display_id`]
    /// (a display handle's update()).
    UpdateDisplayData,
    /// clear_output(): drop what the cell showed before it (at once, or
    /// with [`Output::wait`] when the next output comes). One output with
    /// the MIME type "" and no data.
    ClearOutput,
    /// A type this binding does not know (from a newer library).
    Other(i32),
}

/// One representation (MIME type and bytes) of one rich output message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// "image/png", "text/html", ...
    pub mime: String,
    /// The bytes: UTF-8 for text types, binary for others.
    pub data: Vec<u8>,
    /// display_data, execute_result, update_display_data or clear_output.
    pub kind: OutputKind,
    /// Which message of the run it belongs to, counting from 0; the
    /// representations of one message are consecutive, richest first.
    pub message: usize,
    /// The message's display id (Jupyter's transient display_id): a
    /// display_data's when the cell asked for one, always an
    /// update_display_data's, naming the displays it replaces.
    pub display_id: Option<String>,
    /// A clear_output(wait=True): clear only when the next output comes.
    pub wait: bool,
}

impl Output {
    /// Whether the MIME type is a text type (text/..., application/json,
    /// ...+json, ...+xml), whose data is UTF-8.
    pub fn is_text(&self) -> bool {
        self.mime.starts_with("text/")
            || self.mime == "application/json"
            || self.mime.ends_with("+json")
            || self.mime.ends_with("+xml")
    }

    /// The data as text, for text types.
    pub fn text(&self) -> Option<&str> {
        if self.is_text() {
            std::str::from_utf8(&self.data).ok()
        } else {
            None
        }
    }
}

/// Everything a run reported, copied out of the C result (which is freed
/// at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellResult {
    /// What happened to the cell.
    pub status: Status,
    /// What the cell wrote to stdout, as raw bytes. A stream that passed
    /// the output limit is its head, one marker line and its tail:
    /// `[... 5905 bytes (0 lines) left out: stdout passed the output limit
    /// of 4 KiB; the whole output is in .outputs/cell-1.stdout ...]`, and
    /// [`CellResult::spill_file`] names the file holding the whole of it.
    pub stdout: Vec<u8>,
    /// What the cell wrote to stderr, as raw bytes, cut as stdout is.
    pub stderr: Vec<u8>,
    /// repr() of the last expression; None if there was none, it was None,
    /// it ended with a semicolon, or the cell failed.
    pub value: Option<String>,
    /// The exception, when the cell did not succeed.
    pub error: Option<CellError>,
    /// Rich outputs (figures, display() calls, HTML tables) in order.
    pub outputs: Vec<Output>,
    /// How many outputs were left out for the display limits.
    pub outputs_omitted: usize,
    /// Workspace files created or modified during the run, relative to the
    /// workspace, sorted by byte value. Names are raw bytes, so paths.
    pub files: Vec<PathBuf>,
    /// The cell's number in its session, from 1 after each (re)start.
    pub execution_count: u32,
    /// What was cut or left out.
    pub truncated: Truncated,
    /// The cell killed the worker ([`Status::Killed`]) and the session
    /// went back to its state just before the cell ([`Config::rollback`]):
    /// the next run works without [`Session::restart`].
    pub rolled_back: bool,
    /// From sending the cell to having its result.
    pub wall_time: Duration,
    /// CPU time the worker used meanwhile (zero if it died).
    pub cpu_time: Duration,
    /// The worker's peak resident set size in bytes (zero if it died).
    pub peak_memory: u64,
    /// spill_file's answers for stdout and stderr.
    spill: [Option<String>; 2],
}

impl CellResult {
    /// stdout as text, invalid UTF-8 replaced by U+FFFD.
    pub fn stdout_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stdout)
    }

    /// stderr as text, invalid UTF-8 replaced by U+FFFD.
    pub fn stderr_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.stderr)
    }

    /// Whether the cell ran to the end.
    pub fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// The workspace-relative name of the file that holds the whole of
    /// @stream when it passed the output limit, `.outputs/cell-12.stdout`
    /// (cell 12's stdout), for [`Session::get_file`] or the next cell; None
    /// when the stream was not cut, spill files are off
    /// ([`Config::spill_limit`] 0) or the file could not be written (the
    /// marker line says why).
    pub fn spill_file(&self, stream: Stream) -> Option<&str> {
        let i = match stream {
            Stream::Stdout => 0,
            Stream::Stderr => 1,
        };
        self.spill[i].as_deref()
    }

    /// Copies a C result.
    ///
    /// # Safety
    /// @r is a valid result, not freed before this returns.
    unsafe fn copy_from(r: *const sys::ci_result) -> CellResult {
        let mut len = 0usize;
        let p = sys::ci_result_stdout(r, &mut len);
        let stdout = bytes(p as *const c_void, len);
        let mut len = 0usize;
        let p = sys::ci_result_stderr(r, &mut len);
        let stderr = bytes(p as *const c_void, len);

        let error = cstr_lossy(sys::ci_result_error_name(r)).map(|name| CellError {
            name,
            value: cstr_lossy(sys::ci_result_error_value(r)).unwrap_or_default(),
            traceback: cstr_lossy(sys::ci_result_traceback(r)),
            traceback_full: cstr_lossy(sys::ci_result_traceback_full(r)),
        });

        let n = sys::ci_result_output_count(r);
        let mut outputs = Vec::with_capacity(n);
        for i in 0..n {
            let mut len = 0usize;
            let data = sys::ci_result_output_data(r, i, &mut len);
            outputs.push(Output {
                mime: cstr_lossy(sys::ci_result_output_mime(r, i)).unwrap_or_default(),
                data: bytes(data, len),
                kind: match sys::ci_result_output_type(r, i) {
                    sys::CI_OUTPUT_DISPLAY_DATA => OutputKind::DisplayData,
                    sys::CI_OUTPUT_EXECUTE_RESULT => OutputKind::ExecuteResult,
                    sys::CI_OUTPUT_UPDATE_DISPLAY_DATA => OutputKind::UpdateDisplayData,
                    sys::CI_OUTPUT_CLEAR_OUTPUT => OutputKind::ClearOutput,
                    other => OutputKind::Other(other),
                },
                message: sys::ci_result_output_message(r, i),
                display_id: cstr_lossy(sys::ci_result_output_display_id(r, i)),
                wait: sys::ci_result_output_wait(r, i) != 0,
            });
        }

        let n = sys::ci_result_file_count(r);
        let mut files = Vec::with_capacity(n);
        for i in 0..n {
            let p = sys::ci_result_file_name(r, i);
            if !p.is_null() {
                let name = OsStr::from_bytes(CStr::from_ptr(p).to_bytes());
                files.push(PathBuf::from(name));
            }
        }

        CellResult {
            status: Status::from_raw(sys::ci_result_status(r)),
            stdout,
            stderr,
            value: cstr_lossy(sys::ci_result_value(r)),
            error,
            outputs,
            outputs_omitted: sys::ci_result_outputs_omitted(r),
            files,
            execution_count: sys::ci_result_execution_count(r).max(0) as u32,
            truncated: Truncated(sys::ci_result_truncated(r) as u32),
            rolled_back: sys::ci_result_rolled_back(r) != 0,
            wall_time: Duration::from_micros(sys::ci_result_wall_time_us(r)),
            cpu_time: Duration::from_micros(sys::ci_result_cpu_time_us(r)),
            peak_memory: sys::ci_result_peak_memory(r),
            spill: [
                cstr_lossy(sys::ci_result_spill_file(r, sys::CI_STREAM_STDOUT, std::ptr::null_mut())),
                cstr_lossy(sys::ci_result_spill_file(r, sys::CI_STREAM_STDERR, std::ptr::null_mut())),
            ],
        }
    }
}

/// Frees a C result when dropped, even if copying it panicked.
struct RawResult(*mut sys::ci_result);

impl Drop for RawResult {
    fn drop(&mut self) {
        // SAFETY: a result from ci_run_ex, freed once; NULL is a no-op.
        unsafe { sys::ci_result_free(self.0) }
    }
}

// ---------------------------------------------------------------- running

/// A stream of a cell's output: where a chunk of streamed output came
/// from, or which stream's spill file [`CellResult::spill_file`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Options of one run, for [`Session::run_with`].
///
/// ```no_run
/// # use codeinterp::{Config, RunOptions, Session, Stream};
/// # use std::time::Duration;
/// # let mut session = Session::new(Config::new())?;
/// let mut print = |stream: Stream, chunk: &[u8]| {
///     if stream == Stream::Stdout {
///         print!("{}", String::from_utf8_lossy(chunk));
///     }
/// };
/// let r = session.run_with(
///     "import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(1)",
///     RunOptions::new().timeout(Duration::from_secs(5)).on_output(&mut print),
/// )?;
/// # Ok::<(), codeinterp::Error>(())
/// ```
#[derive(Default)]
pub struct RunOptions<'a> {
    /// This run's wall-clock limit instead of the session's; rounded up to
    /// whole milliseconds, not zero, at most 24 h.
    pub timeout: Option<Duration>,
    /// Called with stdout and stderr as they arrive, on the thread that
    /// runs the cell, as raw bytes in whole lines: each chunk ends with a
    /// line break, except a line of 16 KiB or more (given in pieces cut on
    /// UTF-8 character boundaries), a partial line the cell leaves waiting
    /// 5 ms (a progress bar printed with `end=''`), and what is left when
    /// the run ends. A stream that passes the output limit gets one note
    /// line, saying so and where the whole stream goes, and nothing more.
    /// If it panics, the cell is
    /// interrupted, the closure is not called again, and the panic resumes
    /// once the run is over and its result freed.
    pub on_output: Option<&'a mut OutputFn<'a>>,
    /// Answers the cell's `input()` and `getpass.getpass()`, as a Jupyter
    /// front end does: called with the prompt the cell gave (the cell's
    /// text, as untrusted as its output) and whether it is a password, it
    /// returns the line (without its newline; at most 1 MiB, no NUL) or
    /// `None` to refuse. Without it, or when it refuses, `input()` raises
    /// `StdinNotImplementedError` in the cell. It runs on the thread that
    /// runs the cell while the cell waits, and the cell's timeout runs on.
    /// If it panics, the input is refused, the cell interrupted, neither
    /// closure is called again, and the panic resumes once the run is over.
    pub on_input: Option<&'a mut InputFn<'a>>,
}

/// The closure type of [`RunOptions::on_output`].
pub type OutputFn<'a> = dyn FnMut(Stream, &[u8]) + 'a;

/// The closure type of [`RunOptions::on_input`]: `(prompt, password)` to
/// the answer, or `None` to refuse.
pub type InputFn<'a> = dyn FnMut(&str, bool) -> Option<String> + 'a;

impl<'a> RunOptions<'a> {
    /// No timeout of its own, no callback.
    pub fn new() -> RunOptions<'a> {
        RunOptions::default()
    }

    /// Sets [`RunOptions::timeout`].
    pub fn timeout(mut self, d: Duration) -> RunOptions<'a> {
        self.timeout = Some(d);
        self
    }

    /// Sets [`RunOptions::on_output`].
    pub fn on_output(mut self, f: &'a mut OutputFn<'a>) -> RunOptions<'a> {
        self.on_output = Some(f);
        self
    }

    /// Sets [`RunOptions::on_input`].
    pub fn on_input(mut self, f: &'a mut InputFn<'a>) -> RunOptions<'a> {
        self.on_input = Some(f);
        self
    }
}

impl fmt::Debug for RunOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("timeout", &self.timeout)
            .field("on_output", &self.on_output.as_ref().map(|_| "FnMut"))
            .field("on_input", &self.on_input.as_ref().map(|_| "FnMut"))
            .finish()
    }
}

/// What the trampolines reach through the payload pointer.
struct Streaming<'f, 'a> {
    f: Option<&'f mut OutputFn<'a>>,
    input: Option<&'f mut InputFn<'a>>,
    panic: Option<Box<dyn Any + Send + 'static>>,
    session: *mut sys::ci_session,
}

extern "C" {
    // libc's, which the library's free(3) of an answer pairs with.
    fn malloc(size: usize) -> *mut c_void;
}

/// The longest answer ci_input_fn may give (1 MiB).
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The `ci_input_fn` given to C: the answer copied into malloc(3)'d
/// memory, which the library frees; a refusal, an answer with a NUL or
/// over 1 MiB, and a panic (caught as in output_trampoline) return -1.
unsafe extern "C" fn input_trampoline(
    prompt: *const c_char,
    password: c_int,
    reply: *mut *mut c_char,
    payload: *mut c_void,
) -> c_int {
    // SAFETY: as in output_trampoline.
    let state = &mut *(payload as *mut Streaming<'_, '_>);
    if state.panic.is_some() {
        return -1;
    }
    let f = match state.input {
        Some(ref mut f) => f,
        None => return -1,
    };
    let prompt = if prompt.is_null() {
        Cow::Borrowed("")
    } else {
        CStr::from_ptr(prompt).to_string_lossy()
    };
    let answer = match panic::catch_unwind(AssertUnwindSafe(|| f(&prompt, password != 0))) {
        Ok(answer) => answer,
        Err(p) => {
            state.panic = Some(p);
            sys::ci_session_interrupt(state.session);
            return -1;
        }
    };
    let answer = match answer {
        Some(a) if a.len() <= MAX_ANSWER_BYTES && !a.as_bytes().contains(&0) => a,
        _ => return -1,
    };
    let buf = malloc(answer.len() + 1) as *mut u8;
    if buf.is_null() {
        return -1;
    }
    ptr::copy_nonoverlapping(answer.as_ptr(), buf, answer.len());
    *buf.add(answer.len()) = 0;
    *reply = buf as *mut c_char;
    0
}

/// The `ci_output_fn` given to C. A panic in the closure is caught here
/// (unwinding into C is undefined behaviour), the cell is interrupted so
/// that the run ends soon, and `run_with` resumes the panic afterwards.
unsafe extern "C" fn output_trampoline(
    stream: c_int,
    data: *const c_char,
    len: usize,
    payload: *mut c_void,
) {
    // SAFETY: payload is the &mut Streaming that run_with passed, alive and
    // not otherwise used for the whole run; calls come on the run's thread.
    let state = &mut *(payload as *mut Streaming<'_, '_>);
    if state.panic.is_some() {
        return;
    }
    let stream = match stream {
        sys::CI_STREAM_STDOUT => Stream::Stdout,
        sys::CI_STREAM_STDERR => Stream::Stderr,
        _ => return,
    };
    let chunk: &[u8] = if data.is_null() || len == 0 {
        &[]
    } else {
        slice::from_raw_parts(data as *const u8, len)
    };
    let f = match state.f {
        Some(ref mut f) => f,
        None => return,
    };
    if let Err(p) = panic::catch_unwind(AssertUnwindSafe(|| f(stream, chunk))) {
        state.panic = Some(p);
        // Allowed from the callback by the header.
        sys::ci_session_interrupt(state.session);
    }
}

// ----------------------------------------------------------------- session

/// What a session shares with its [`Interrupter`]s.
///
/// Soundness: `ci_session_interrupt` may be called from any thread while
/// the session is in use, but must not overlap `ci_session_free`, and after
/// the free the pointer dangles. A bare pointer handed to another thread
/// could not promise either, so an interrupter holds this `Arc` and reaches
/// the pointer only under the mutex, and `Session::drop` frees the session
/// under the same mutex and leaves NULL behind. An interrupter may
/// therefore outlive its session (it then does nothing), yet dropping the
/// `Session` still ends the worker at once, which an `Arc` keeping the
/// whole session alive would not. The mutex is never held across anything
/// but those two calls, and a run does not take it, so interrupting never
/// waits for a run.
struct Shared {
    raw: Mutex<*mut sys::ci_session>,
}

// SAFETY: the pointer is only used, from any thread, for
// ci_session_interrupt (thread safe by the header) and, by Session::drop,
// for ci_session_free, the two kept apart by the mutex.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// A handle that interrupts the cell running on a session, from any
/// thread, as Jupyter's "interrupt kernel" does: the cell gets a
/// KeyboardInterrupt and its status is [`Status::Interrupted`]; the
/// session keeps its state. Cheap to clone; `Send + Sync`.
///
/// It stays safe to use after the session is dropped: it then does nothing.
#[derive(Clone)]
pub struct Interrupter {
    shared: Arc<Shared>,
}

impl Interrupter {
    /// Interrupts the running cell. Returns true if a cell was running and
    /// is being interrupted; false if none was running (it never affects a
    /// cell that starts later) or the session is gone.
    pub fn interrupt(&self) -> bool {
        let raw = self.shared.raw.lock().unwrap_or_else(|e| e.into_inner());
        if raw.is_null() {
            return false;
        }
        // SAFETY: the session is alive while the mutex is held and the
        // pointer not NULL; this call may overlap any but ci_session_free.
        unsafe { sys::ci_session_interrupt(*raw) == 1 }
    }
}

impl fmt::Debug for Interrupter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Interrupter")
    }
}

/// A sandboxed, stateful Python interpreter: one worker process and its
/// private workspace. Dropping it kills the worker and removes the
/// session's directory with everything in it.
///
/// `Send` but not `Sync`: the C library allows one thread at a time on a
/// session, which `&mut self` on the mutating calls and `!Sync` ensure;
/// [`Session::interrupter`] is the way to reach a running cell from
/// elsewhere. Moving a session to another thread is safe because the C
/// API ties a session to no thread: it asks only that one thread at a time
/// call into it. Sharing one (`&Session` on two threads) is refused at
/// compile time:
///
/// ```compile_fail
/// fn shared<T: Sync>() {}
/// shared::<codeinterp::Session>();
/// ```
pub struct Session {
    raw: *mut sys::ci_session,
    shared: Arc<Shared>,
    workspace: PathBuf,
    // The host functions' payloads (boxed: each address is a C payload);
    // dropped after the session is freed.
    #[allow(clippy::vec_box)]
    functions: Vec<Box<functions::Slot>>,
    // The event closure's payload, dropped after the session is freed.
    _events: Option<Box<EventSlot>>,
    // What it was started with, for Session::fork (its closures are Arcs).
    config: Config,
}

// SAFETY: a session may move between threads (the header asks only for one
// thread at a time, and nothing of it is tied to the creating thread).
unsafe impl Send for Session {}

impl Session {
    /// Starts a session: a private directory and a sandboxed worker with
    /// the preload list imported (by default numpy, pandas and
    /// matplotlib). About 0.6 s for the first session of a preload list or
    /// one with [`Config::zygote`] off; milliseconds for the next ones,
    /// forked from the list's zygote.
    pub fn new(config: Config) -> Result<Session> {
        // SAFETY: valid out pointer and config; the config is copied.
        Session::start("Session::new", config, |out, cfg| unsafe { sys::ci_session_new(out, cfg) })
    }

    /// [`Session::new`] and [`Session::restore`]: @config as a C config,
    /// the session started by @start (which sets this thread's
    /// `ci_session_errmsg(NULL)` when it fails), errors named for @op.
    fn start<F>(op: &'static str, config: Config, start: F) -> Result<Session>
    where
        F: FnOnce(*mut *mut sys::ci_session, *const sys::ci_config) -> c_int,
    {
        let cfg = config.to_raw(op)?;
        let slots = functions::add(op, cfg.0, &config.functions)?;
        let events = config.events.as_ref().map(|h| Box::new(EventSlot(Arc::clone(&h.0))));
        if let Some(ref slot) = events {
            let payload = &**slot as *const EventSlot as *mut c_void;
            // SAFETY: a valid config; the slot outlives every event (it is
            // the Session's, dropped after the free).
            let rc = unsafe { sys::ci_config_set_event_fn(cfg.0, Some(event_trampoline), payload) };
            if rc != sys::CI_OK {
                return Err(Error::new(op, rc, "Config::on_event refused".to_string()));
            }
        }
        let mut raw: *mut sys::ci_session = ptr::null_mut();
        let rc = start(&mut raw, cfg.0);
        drop(cfg);
        if rc != sys::CI_OK {
            // SAFETY: NULL gives this thread's last failure of @start.
            return Err(unsafe { Error::from_session(op, rc, ptr::null()) });
        }
        // SAFETY: raw is a live session; the string lives until the free.
        let workspace = unsafe { CStr::from_ptr(sys::ci_session_workspace(raw)) };
        let workspace = PathBuf::from(OsStr::from_bytes(workspace.to_bytes()));
        functions::attach(&slots, raw);
        Ok(Session {
            raw,
            shared: Arc::new(Shared {
                raw: Mutex::new(raw),
            }),
            workspace,
            functions: slots,
            _events: events,
            config,
        })
    }

    /// Runs a cell with the session's timeout. The state is kept between
    /// cells; a cell ending with an expression has its repr as the value.
    ///
    /// `Err` only when the cell was not run (a NUL byte in @code, a cell
    /// over 16 MiB, a dead worker); what became of a cell that ran is in
    /// [`CellResult::status`].
    pub fn run(&mut self, code: &str) -> Result<CellResult> {
        self.run_as("Session::run", code, RunOptions::default())
    }

    /// [`Session::run`] with options: a timeout of its own, and a callback
    /// that sees the output as it comes.
    pub fn run_with(&mut self, code: &str, options: RunOptions<'_>) -> Result<CellResult> {
        self.run_as("Session::run_with", code, options)
    }

    /// The run of @op (run or run_with), its errors named for it.
    fn run_as(
        &mut self,
        op: &'static str,
        code: &str,
        options: RunOptions<'_>,
    ) -> Result<CellResult> {
        const MAX_CELL_BYTES: usize = 16 << 20;
        const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);
        let code = c_string(op, "code", code.as_bytes())?;
        if code.as_bytes().len() > MAX_CELL_BYTES {
            return Err(Error::new(
                op,
                sys::CI_ETOOBIG,
                format!(
                    "code of {} bytes is over the limit of a cell, 16 MiB ({} bytes)",
                    code.as_bytes().len(),
                    MAX_CELL_BYTES
                ),
            ));
        }
        let mut opts = sys::CI_RUN_OPTIONS_INIT;
        if let Some(d) = options.timeout {
            if d.is_zero() || d > MAX_TIMEOUT {
                return Err(Error::invalid(
                    op,
                    format!(
                        "RunOptions::timeout {:?} refused: must be 1 ms to 24 h, or None for \
                         the session's",
                        d
                    ),
                ));
            }
            opts.timeout_ms = millis(d);
        }
        let mut streaming = if options.on_output.is_some() || options.on_input.is_some() {
            Some(Streaming {
                f: options.on_output,
                input: options.on_input,
                panic: None,
                session: self.raw,
            })
        } else {
            None
        };
        if let Some(ref mut st) = streaming {
            if st.f.is_some() {
                opts.on_output = Some(output_trampoline);
            }
            if st.input.is_some() {
                opts.on_input = Some(input_trampoline);
            }
            opts.payload = st as *mut Streaming<'_, '_> as *mut c_void;
        }
        let mut out: *mut sys::ci_result = ptr::null_mut();
        // SAFETY: live session used by this thread only (&mut self); code,
        // opts and the payload outlive the call.
        let rc = unsafe { sys::ci_run_ex(self.raw, code.as_ptr(), &opts, &mut out) };
        let result = RawResult(out);
        let panicked = streaming.and_then(|st| st.panic);
        let copied = if rc == sys::CI_OK && !result.0.is_null() {
            // SAFETY: a valid result, freed only when `result` drops.
            Ok(unsafe { CellResult::copy_from(result.0) })
        } else {
            // SAFETY: live session, used by this thread only.
            Err(unsafe { Error::from_session(op, rc, self.raw) })
        };
        drop(result);
        if let Some(p) = panicked.or_else(|| functions::take_panic(&self.functions)) {
            panic::resume_unwind(p);
        }
        copied
    }

    /// Writes @data to the file @name in the workspace, atomically
    /// replacing any file of that name. @name is relative to the workspace;
    /// "/" separates existing subdirectories; no component may be empty,
    /// "." or "..".
    pub fn put_file<P: AsRef<Path>>(&mut self, name: P, data: &[u8]) -> Result<()> {
        const OP: &str = "Session::put_file";
        let name = name_c_string(OP, name.as_ref())?;
        // SAFETY: live session, this thread only; data is len bytes.
        let rc = unsafe {
            sys::ci_session_put_file(
                self.raw,
                name.as_ptr(),
                data.as_ptr() as *const c_void,
                data.len(),
            )
        };
        self.check(OP, rc)
    }

    /// Reads the whole file @name from the workspace (never through a
    /// link). @name follows [`Session::put_file`]'s rule.
    pub fn get_file<P: AsRef<Path>>(&self, name: P) -> Result<Vec<u8>> {
        const OP: &str = "Session::get_file";
        let name = name_c_string(OP, name.as_ref())?;
        let mut data: *mut c_void = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live session, this thread only (&self and !Sync: no run
        // can be in progress); the buffer is copied, then ci_free'd.
        unsafe {
            let rc = sys::ci_session_get_file(self.raw, name.as_ptr(), &mut data, &mut len);
            if rc != sys::CI_OK {
                return Err(Error::from_session(OP, rc, self.raw));
            }
            let copy = bytes(data, len);
            sys::ci_free(data);
            Ok(copy)
        }
    }

    /// Replaces the worker with a fresh one: empty interpreter state,
    /// execution count back to 0 (and [`Session::left_out`] empty), same
    /// workspace and files. Works on a dead session too.
    /// With a manifest ([`Config::manifest`]) it is verified again
    /// first, and fails with [`ErrorKind::Manifest`].
    pub fn restart(&mut self) -> Result<()> {
        // SAFETY: live session, this thread only.
        let rc = unsafe { sys::ci_session_restart(self.raw) };
        self.check("Session::restart", rc)
    }

    /// The absolute path of the workspace, the cell's working directory.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The worker's process id; None when the worker is dead.
    pub fn pid(&self) -> Option<u32> {
        // SAFETY: live session.
        let pid = unsafe { sys::ci_session_pid(self.raw) };
        if pid > 0 {
            Some(pid as u32)
        } else {
            None
        }
    }

    /// The sandbox layers the current worker applied (empty when dead).
    pub fn sandbox(&self) -> Sandbox {
        // SAFETY: live session.
        Sandbox(unsafe { sys::ci_session_sandbox(self.raw) } as u32)
    }

    /// Whether a cell that kills the worker will be rolled back: the
    /// session has [`Config::rollback`] on and got what it needs (a worker
    /// forked from the zygote, in a PID namespace of its own); `false`
    /// when the worker is dead.
    pub fn rollback_active(&self) -> bool {
        // SAFETY: live session.
        unsafe { sys::ci_session_rollback_active(self.raw) != 0 }
    }

    /// The detail of the last failed call on the session, or of the last
    /// cell that killed its worker; empty if none.
    pub fn last_error_detail(&self) -> String {
        // SAFETY: live session; the string is copied at once.
        unsafe { cstr_lossy(sys::ci_session_errmsg(self.raw)) }.unwrap_or_default()
    }

    /// A `Send + Sync` handle that interrupts this session's running cell
    /// from another thread (or a callback). See [`Interrupter`].
    pub fn interrupter(&self) -> Interrupter {
        Interrupter {
            shared: Arc::clone(&self.shared),
        }
    }

    /// The raw session, for calls the safe API lacks. It stays owned by
    /// this `Session` (do not free it) and follows the header's rules.
    pub fn as_ptr(&self) -> *mut sys::ci_session {
        self.raw
    }

    fn check(&self, op: &'static str, rc: c_int) -> Result<()> {
        if rc == sys::CI_OK {
            Ok(())
        } else {
            // SAFETY: live session, this thread only.
            Err(unsafe { Error::from_session(op, rc, self.raw) })
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("pid", &self.pid())
            .field("workspace", &self.workspace)
            .finish()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let mut raw = self.shared.raw.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: freed once, with no interrupter inside ci_session_interrupt
        // (they hold the mutex for the call) and none able to start after.
        unsafe { sys::ci_session_free(*raw) };
        *raw = ptr::null_mut();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millis_round_up() {
        assert_eq!(millis(Duration::from_millis(300)), 300);
        assert_eq!(millis(Duration::from_micros(1)), 1);
        assert_eq!(millis(Duration::from_micros(1500)), 2);
        assert_eq!(millis(Duration::from_secs(u64::MAX)), c_ulong::MAX);
    }

    #[test]
    fn error_kinds_round_trip() {
        for code in -12..=-1 {
            assert_eq!(ErrorKind::from_code(code).code(), code);
            assert!(!matches!(ErrorKind::from_code(code), ErrorKind::Other(_)));
        }
        assert_eq!(ErrorKind::from_code(-99), ErrorKind::Other(-99));
        let e = Error::new("Session::get_file", sys::CI_ENOENT, "x.csv".into());
        assert_eq!(e.to_string(), "Session::get_file: no such file in the workspace: x.csv");
        assert_eq!(Error::new("Session::run", sys::CI_EBUSY, String::new()).to_string(),
                   "Session::run: a run is already in progress on this session");
        assert_eq!(Error::new("Session::run", sys::CI_EDEAD, String::new()).message(),
                   "the session's worker is dead; call Session::restart");
    }

    #[test]
    fn c_names_become_rust_names() {
        assert_eq!(rust_names("ci_session_get_file: invalid name"), "invalid name");
        assert_eq!(
            rust_names("the worker is dead; call ci_session_restart, not ci_run_ex"),
            "the worker is dead; call Session::restart, not Session::run_with"
        );
        assert_eq!(rust_names("ci_run: x ci_unknown_fn y"), "x ci_unknown_fn y");
        assert_eq!(rust_names("xci_run ci_run"), "xci_run Session::run");
        assert_eq!(rust_names(""), "");
    }

    #[test]
    fn interrupter_is_send_sync_session_is_send() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<Interrupter>();
        send::<Session>();
        send_sync::<Error>();
        send_sync::<CellResult>();
    }

    #[test]
    fn version_matches_header() {
        assert_eq!(
            version(),
            format!("{}.{}.{}", sys::CI_VERSION_MAJOR, sys::CI_VERSION_MINOR, sys::CI_VERSION_PATCH)
        );
    }
}
