//! Snapshots (`ci_session_snapshot(3)`, docs/snapshot-format.md): a
//! session's interpreter state and workspace as one byte string, which
//! [`Session::restore`] starts a new session from, and branches
//! ([`Session::fork`]), a snapshot restored at once.

use super::*;

impl Session {
    /// The session's state as one self-contained byte string, an owned
    /// copy (the C buffer is freed before this returns), which
    /// [`Session::restore`] starts a new session from, on this machine or
    /// another with the same package set. It carries the interpreter's
    /// state (every variable, the functions, lambdas and classes defined in
    /// cells, `In` and `Out`, the execution count, the random and
    /// numpy.random generators' states), pickled with dill inside the
    /// sandboxed worker, and the workspace's directories and regular files.
    /// Imports are carried by name. What cannot be carried (a generator in
    /// flight, an open file, socket or thread, anything pickle refuses, a
    /// symbolic link...) is left out and named in the snapshot
    /// ([`snapshot_left_out`]).
    ///
    /// It runs as a cell would, between cells: the session's timeout and an
    /// [`Interrupter`] stop it. The session goes on unchanged. No host
    /// function ([`Config::function`]) runs meanwhile: pickling runs the
    /// objects' own code (`__reduce__`) in the sandbox, where a call of a
    /// host function, an allowed URL, %pip install or input() raises
    /// RuntimeError, and the object is left out, its entry saying so.
    ///
    /// # Errors
    /// [`ErrorKind::Dead`] if the worker is dead or died while it pickled
    /// (call [`Session::restart`]); [`ErrorKind::OutOfMemory`];
    /// [`ErrorKind::TooBig`] if the files are over what a snapshot carries
    /// (the disk or inode quota); [`ErrorKind::Io`] if pickling failed
    /// otherwise, was stopped, or the audit log failed. The detail says
    /// which.
    ///
    /// `&self`, as [`Session::get_file`]: `Session` is not `Sync`, so no
    /// other call can overlap it; [`Session::interrupter`] reaches it from
    /// another thread.
    pub fn snapshot(&self) -> Result<Vec<u8>> {
        self.snapshot_as("Session::snapshot")
    }

    /// [`Session::snapshot`], its errors named for @op.
    fn snapshot_as(&self, op: &'static str) -> Result<Vec<u8>> {
        let mut data: *mut c_void = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: live session, this thread only (&self and !Sync); the
        // buffer is copied, then ci_free'd.
        unsafe {
            let rc = sys::ci_session_snapshot(self.raw, &mut data, &mut len);
            if rc == sys::CI_OK {
                let copy = bytes(data, len);
                sys::ci_free(data);
                Ok(copy)
            } else {
                Err(Error::from_session(op, rc, self.raw))
            }
        }
    }

    /// Starts a new session, as [`Session::new`]`(config)` does, from a
    /// snapshot [`Session::snapshot`] made: the snapshot's files are
    /// written into the new workspace and its interpreter state is loaded
    /// by the new worker, sandboxed and within a cell's timeout; the
    /// execution count goes on from the snapshot's. @data is only read,
    /// never kept. The bytes are taken as hostile: all of @data is checked
    /// before any session starts, and only the locked-down worker unpickles
    /// the state, so a forged snapshot can do what a cell can and no more.
    /// One snapshot may be restored any number of times (`config.clone()`
    /// for each), each session going its own way.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for bytes that are no snapshot this
    /// library reads (cut, changed, forged), a snapshot taken with another
    /// package set, or a state that does not load (the detail says which,
    /// with the exception); [`ErrorKind::TooBig`] if the state is over the
    /// config's memory limit or the files over its file limit, disk or
    /// inode quota; [`ErrorKind::Dead`] if the new worker died loading it;
    /// [`ErrorKind::Io`] if loading it timed out; any error of
    /// [`Session::new`].
    ///
    /// No host function runs while the state loads either: a call raises
    /// RuntimeError in the worker, and the state does not load
    /// ([`ErrorKind::InvalidArgument`]). A variable that holds a host
    /// function (`f = query_sales`) is carried by the function's name, and
    /// loads only if @config has a function of that name
    /// ([`Config::function`]): [`ErrorKind::InvalidArgument`] otherwise,
    /// the detail saying so.
    pub fn restore(config: Config, data: &[u8]) -> Result<Session> {
        Session::restore_as("Session::restore", config, data)
    }

    /// [`Session::restore`], its errors named for @op.
    fn restore_as(op: &'static str, config: Config, data: &[u8]) -> Result<Session> {
        Session::start(op, config, |out, cfg| {
            // SAFETY: valid out pointer and config (copied); data.len()
            // bytes at a pointer that is never NULL, read during the call.
            unsafe { sys::ci_session_restore(out, cfg, data.as_ptr() as *const c_void, data.len()) }
        })
    }

    /// A branch of the session: a new session, with the [`Config`] this
    /// one was started with, whose state and files are a copy of this
    /// one's, as [`Session::snapshot`] carries them; its execution count
    /// goes on from this one's. What either does afterwards the other
    /// never sees, and each is dropped on its own, in any order: the
    /// branch runs on after its parent is dropped. Today the copy is a
    /// snapshot restored at once, [`Session::snapshot`] then
    /// [`Session::restore`]: this session is busy while its snapshot is
    /// taken (an [`Interrupter`] or the timeout stops it), not while the
    /// branch starts, and what a snapshot cannot carry (a generator in
    /// flight, an open file...) is missing from the branch and listed by
    /// its [`Session::left_out`].
    ///
    /// The branch is an owned `Session`, `Send` as any: it may go to
    /// another thread. The session keeps a clone of its `Config` for this;
    /// a `Config`'s closures ([`Config::function`], [`Config::on_event`])
    /// are shared (`Arc`), so the branch calls the same closures, `Send +
    /// Sync` already, through C payloads of its own that it drops with
    /// itself. What the closures capture is therefore shared by both
    /// sessions, and a panic is resumed by the session whose cell ran it.
    /// Having the parent's functions, the branch loads the variables that
    /// hold one. None runs during the fork (see [`Session::snapshot`]).
    /// The branch appends to the same audit log ([`Config::audit_log`]).
    ///
    /// # Errors
    /// Named `Session::fork`: those of [`Session::snapshot`]
    /// ([`ErrorKind::Dead`] on a dead session, [`ErrorKind::OutOfMemory`],
    /// [`ErrorKind::TooBig`], [`ErrorKind::Io`]), then those of
    /// [`Session::restore`] for the branch's start (a quota, the host's
    /// limits).
    pub fn fork(&self) -> Result<Session> {
        const OP: &str = "Session::fork";
        let data = self.snapshot_as(OP)?;
        Session::restore_as(OP, self.config.clone(), &data)
    }

    /// What the snapshot this session was started from
    /// ([`Session::restore`], [`Session::fork`]) could not carry, as
    /// [`snapshot_left_out`] lists it: one `"name: reason"` per item
    /// (`"gen: a generator in flight"`). Empty for a session
    /// [`Session::new`] started, and after [`Session::restart`]. An owned
    /// copy; it never fails.
    pub fn left_out(&self) -> Vec<String> {
        // SAFETY: live session; the string is borrowed until a restart or
        // the free, which need &mut self or the Session, and is copied at
        // once.
        let text = unsafe { cstr_lossy(sys::ci_session_left_out(self.raw)) };
        lines(&text.unwrap_or_default())
    }
}

/// One string per line of @text, each line ending with a newline (the
/// last may not); empty for "".
fn lines(text: &str) -> Vec<String> {
    text.split_terminator('\n').map(str::to_string).collect()
}

/// What the snapshot @data could not carry, one entry per item, `"name:
/// reason"` (`"gen: a generator in flight"`, `"fh: an open file"`,
/// `"link.txt: a symbolic link"`): a variable's name, `Out[N]` or a
/// workspace path (its bytes that are not printable ASCII read as `?`),
/// then `"... and N more files"` if the list was cut at 1 MiB. Empty when
/// everything was carried. Starts no session; thread-safe.
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] if @data is no snapshot (checked as
/// [`Session::restore`] checks it; the detail says why);
/// [`ErrorKind::OutOfMemory`].
pub fn snapshot_left_out(data: &[u8]) -> Result<Vec<String>> {
    const OP: &str = "snapshot_left_out";
    let mut list: *mut c_char = ptr::null_mut();
    // SAFETY: data.len() bytes at a pointer never NULL; on CI_OK the list
    // is a NUL-terminated string of the caller's, copied, then ci_free'd;
    // on failure this thread's ci_session_errmsg(NULL) has the detail.
    let text = unsafe {
        let rc = sys::ci_snapshot_left_out(data.as_ptr() as *const c_void, data.len(), &mut list);
        if rc != sys::CI_OK {
            return Err(Error::from_session(OP, rc, ptr::null()));
        }
        let text = cstr_lossy(list).unwrap_or_default();
        sys::ci_free(list as *mut c_void);
        text
    };
    Ok(lines(&text))
}
