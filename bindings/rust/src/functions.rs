//! Host functions ([`Config::function`], `ci_config_add_function(3)`): a
//! cell's call of one runs a closure of the host, which gets the call's
//! arguments as JSON text and answers with JSON text or a
//! [`FunctionError`]. The binding has no JSON library of its own (it has
//! no dependencies): the library checks both directions' JSON.

use super::*;
use std::cell::{Cell, RefCell};

/// The closure of a host function: the call's arguments as JSON text,
/// `{"args":[...],"kwargs":{...}}` (checked by the library, but the cell's
/// text), to the value's JSON text, or the exception to raise in the cell.
pub type HostFn = dyn Fn(&str) -> std::result::Result<String, FunctionError> + Send + Sync;

/// An exception a host function raises in the cell: the builtin exception
/// named `exception` when there is one that derives from Exception
/// ("ValueError", "KeyError"), else HostFunctionError carrying the name
/// and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionError {
    /// Identifiers joined by dots, at most 128 bytes.
    pub exception: String,
    /// What str() of the exception says; it reaches the cell.
    pub message: String,
}

impl FunctionError {
    /// The error raising `exception` with `message`.
    pub fn new(exception: &str, message: &str) -> FunctionError {
        FunctionError {
            exception: exception.to_string(),
            message: message.to_string(),
        }
    }
}

impl fmt::Display for FunctionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.exception, self.message)
    }
}

impl std::error::Error for FunctionError {}

/// A host function as [`Config`] keeps it.
#[derive(Clone)]
pub(crate) struct Definition {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) f: Arc<HostFn>,
}

impl fmt::Debug for Definition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Definition")
            .field("name", &self.name)
            .field("description", &self.description)
            .finish()
    }
}

/// What a function's C payload points to, for the life of its session.
pub(crate) struct Slot {
    name: String,
    f: Arc<HostFn>,
    session: Cell<*mut sys::ci_session>,
    panic: RefCell<Option<Box<dyn Any + Send + 'static>>>,
}

const NAME_WANT: &str = "an ASCII Python identifier of at most 64 bytes, not a keyword or a \
                         builtin, not starting with '_', given once; a description of at most \
                         65536 bytes";

/// Adds @defs to @cfg, errors named for @op; the slots must outlive every
/// session made with it.
// Boxed: each Slot's address is a C payload, which must not move as the
// Vec grows.
#[allow(clippy::vec_box)]
pub(crate) fn add(
    op: &'static str,
    cfg: *mut sys::ci_config,
    defs: &[Definition],
) -> Result<Vec<Box<Slot>>> {
    let mut slots = Vec::with_capacity(defs.len());
    for d in defs {
        let name = c_string(op, "Config::function's name", d.name.as_bytes())?;
        let desc = c_string(
            op,
            "Config::function's description",
            d.description.as_bytes(),
        )?;
        let slot = Box::new(Slot {
            name: d.name.clone(),
            f: Arc::clone(&d.f),
            session: Cell::new(ptr::null_mut()),
            panic: RefCell::new(None),
        });
        let payload = &*slot as *const Slot as *mut c_void;
        // SAFETY: a valid config; the strings are copied; the slot lives in
        // the Session (a Box, so it does not move) as long as the library
        // may call it.
        let rc = unsafe {
            sys::ci_config_add_function(
                cfg,
                name.as_ptr(),
                if d.description.is_empty() {
                    ptr::null()
                } else {
                    desc.as_ptr()
                },
                Some(trampoline),
                payload,
            )
        };
        if rc != sys::CI_OK {
            let what = format!("Config::function({}) refused", shown(d.name.as_bytes()));
            let detail = if rc == sys::CI_EINVAL || rc == sys::CI_ETOOBIG {
                format!("{}: must be {}", what, NAME_WANT)
            } else {
                what
            };
            return Err(Error::new(op, rc, detail));
        }
        slots.push(slot);
    }
    Ok(slots)
}

/// Tells each slot its session, for the interrupt of a panic.
pub(crate) fn attach(slots: &[Box<Slot>], session: *mut sys::ci_session) {
    for s in slots {
        s.session.set(session);
    }
}

/// The first panic a host function caught during the last run, if any.
pub(crate) fn take_panic(slots: &[Box<Slot>]) -> Option<Box<dyn Any + Send + 'static>> {
    slots.iter().find_map(|s| s.panic.borrow_mut().take())
}

/// Answers with an exception; a name or message the library refuses
/// becomes a RuntimeError with what can be said.
unsafe fn reply_error(reply: *mut sys::ci_reply, exception: &str, message: &str) {
    let mut msg = message.replace('\0', "\\0");
    if msg.len() > 65536 {
        let mut end = 65536;
        while !msg.is_char_boundary(end) {
            end -= 1;
        }
        msg.truncate(end);
    }
    let msg = CString::new(msg).unwrap_or_default();
    let rc = match CString::new(exception) {
        Ok(name) => sys::ci_reply_error(reply, name.as_ptr(), msg.as_ptr()),
        Err(_) => sys::CI_EINVAL,
    };
    if rc != sys::CI_OK {
        sys::ci_reply_error(
            reply,
            b"RuntimeError\0".as_ptr() as *const c_char,
            msg.as_ptr(),
        );
    }
}

/// The ci_function_fn of every host function: runs the slot's closure,
/// catching a panic (kept for the run to resume, the cell interrupted).
unsafe extern "C" fn trampoline(
    payload: *mut c_void,
    _name: *const c_char,
    args: *const c_char,
    len: usize,
    reply: *mut sys::ci_reply,
) {
    // SAFETY: the payload is a Slot the Session owns (add), called on the
    // thread in ci_run_ex while the session is borrowed mutably (never in a
    // snapshot or a restore: the library keeps host functions closed then).
    let slot = &*(payload as *const Slot);
    if slot.panic.borrow().is_some() {
        reply_error(
            reply,
            "RuntimeError",
            "a host function panicked in this run",
        );
        return;
    }
    let bytes = slice::from_raw_parts(args as *const u8, len);
    let args = String::from_utf8_lossy(bytes);
    let f = &slot.f;
    match panic::catch_unwind(AssertUnwindSafe(|| f(&args))) {
        Ok(Ok(json)) => {
            if sys::ci_reply_json(reply, json.as_ptr() as *const c_char, json.len()) != sys::CI_OK {
                let msg = format!(
                    "the host function {}() answered {} bytes that are not JSON or are over the \
                     result limit",
                    slot.name,
                    json.len()
                );
                reply_error(reply, "TypeError", &msg);
            }
        }
        Ok(Err(e)) => reply_error(reply, &e.exception, &e.message),
        Err(p) => {
            *slot.panic.borrow_mut() = Some(p);
            let s = slot.session.get();
            if !s.is_null() {
                sys::ci_session_interrupt(s);
            }
            let msg = format!("the host function {}() panicked", slot.name);
            reply_error(reply, "RuntimeError", &msg);
        }
    }
}
