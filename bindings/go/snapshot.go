package codeinterp

/*
#include <stdlib.h>
#include <string.h>
#include <codeinterp.h>

// ci_session_restore and ci_snapshot_left_out, each with the failure's
// detail read on the same thread (ci_session_errmsg(NULL) is kept per
// thread, and a goroutine may move between two cgo calls).
static int cigo_session_restore(ci_session **out, const ci_config *cfg, const void *data,
                                size_t len, char **detail)
{
	int rc = ci_session_restore(out, cfg, data, len);
	*detail = rc != CI_OK ? strdup(ci_session_errmsg(NULL)) : NULL;
	return rc;
}

static int cigo_snapshot_left_out(const void *data, size_t len, char **list, char **detail)
{
	int rc = ci_snapshot_left_out(data, len, list);
	*detail = rc != CI_OK ? strdup(ci_session_errmsg(NULL)) : NULL;
	return rc;
}
*/
import "C"

import (
	"strings"
	"unsafe"
)

// Snapshot returns the session's state as one self-contained byte string,
// the caller's own copy (the C buffer is freed before it returns), which
// RestoreSession starts a new session from, on this machine or another
// with the same package set (docs/snapshot-format.md). It carries the
// interpreter's state (every variable, the functions, lambdas and classes
// defined in cells, In and Out, the execution count, the random and
// numpy.random generators' states), pickled with dill inside the sandboxed
// worker, and the workspace's directories and regular files. Imports are
// carried by name. What cannot be carried (a generator in flight, an open
// file, socket or thread, anything pickle refuses, a symbolic link...) is
// left out and named in the snapshot (SnapshotLeftOut).
//
// It runs as a cell would, between cells: the session's timeout and
// Interrupt stop it, with ErrIO. The session goes on unchanged. Errors:
// ErrBusy during another call on the session, ErrDead if the worker is
// dead or died while it pickled (Restart it), ErrNoMemory, ErrTooBig if
// the files are over what a snapshot carries (the disk or inode quota),
// ErrIO if pickling failed otherwise, was stopped, or the audit log
// failed; ErrClosed after Close. The Detail says which.
//
// No host function (WithFunction) runs while a snapshot is taken: pickling
// runs the objects' own code (__reduce__) in the sandbox, where a call of
// a host function, an allowed URL, %pip install or input() raises
// RuntimeError, and the object is left out, its entry saying so.
//
// Like the other calls, it may be made from any goroutine, one call on the
// session at a time; Interrupt and Close may be called meanwhile.
func (s *Session) Snapshot() ([]byte, error) {
	return s.snapshot("Snapshot")
}

// snapshot is Snapshot, its errors named for op.
func (s *Session) snapshot(op string) ([]byte, error) {
	if err := s.lock(op); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var data unsafe.Pointer
	var n C.size_t
	rc := C.ci_session_snapshot(s.ptr, &data, &n)
	var err error
	if rc != C.CI_OK {
		err = s.fail(op, rc)
		s.refresh()
	} else {
		defer C.ci_free(data)
	}
	if err != nil {
		return nil, err
	}
	return goBytes(data, n), nil
}

// noBytes is what an empty slice passes to C: the library refuses a NULL
// pointer with a message of its own, but no bytes are no snapshot either.
var noBytes [1]byte

// bytesPointer is a pointer to data's bytes, never NULL; C must not keep it.
func bytesPointer(data []byte) unsafe.Pointer {
	if len(data) == 0 {
		return unsafe.Pointer(&noBytes[0])
	}
	return unsafe.Pointer(&data[0])
}

// RestoreSession starts a new session, as NewSession(opts...) does, from a
// snapshot Snapshot made, and returns it: the snapshot's files are written
// into the new workspace and its interpreter state is loaded by the new
// worker, sandboxed and within a cell's timeout; the execution count goes
// on from the snapshot's. data is only read, never kept: the caller may
// change or drop it afterwards. The bytes are taken as hostile: all of
// data is checked before any session starts, and only the locked-down
// worker unpickles the state, so a forged snapshot can do what a cell can
// and no more. One snapshot may be restored any number of times, each
// session going its own way.
//
// Errors: ErrInvalid for bytes that are no snapshot this library reads
// (cut, changed, forged), a snapshot taken with another package set, or a
// state that does not load (the Detail says which, with the exception);
// ErrTooBig if the state is over the memory limit or the files over the
// file limit, disk or inode quota of the options; ErrDead if the new
// worker died loading it; ErrIO if loading it timed out; any error of
// NewSession. It may be called from any goroutine.
//
// No host function runs while the state loads either: a call raises
// RuntimeError in the worker, and the state does not load (ErrInvalid). A
// variable that holds a host function (f = query_sales) is carried by the
// function's name, and loads only if opts give a function of that name
// (WithFunction): ErrInvalid otherwise, the Detail saying so.
func RestoreSession(data []byte, opts ...Option) (*Session, error) {
	return restoreSession("RestoreSession", data, opts)
}

// restoreSession is RestoreSession, its errors named for op.
func restoreSession(op string, data []byte, opts []Option) (*Session, error) {
	return startSession(op, opts, func(cfg *C.ci_config, p **C.ci_session, detail **C.char) C.int {
		return C.cigo_session_restore(p, cfg, bytesPointer(data), C.size_t(len(data)), detail)
	})
}

// Fork returns a branch of the session: a new session, with the options
// this one was started with, whose state and files are a copy of this
// one's, as Snapshot carries them; its execution count goes on from this
// one's. What either does afterwards the other never sees, and each is
// closed on its own, in any order: the branch runs on after its parent's
// Close. Today the copy is a snapshot restored at once, Snapshot then
// RestoreSession: this session is busy (other calls on it fail with
// ErrBusy) while its snapshot is taken, not while the branch starts, and
// what a snapshot cannot carry (a generator in flight, an open file...)
// is missing from the branch and listed by its LeftOut.
//
// The branch is the caller's, to Close as any session. Its host functions
// (WithFunction) and event function are the parent's Go functions with C
// handles of the branch's own, released by the branch's Close: what the
// functions capture is shared by both sessions, but a panic is raised by
// the session whose cell ran it. Having the parent's functions, the
// branch loads the variables that hold one. None runs during Fork (see
// Snapshot). The branch appends to the same audit log as its parent
// (WithAuditLog).
//
// Errors, named for Fork: those of Snapshot (ErrBusy, ErrDead on a dead
// session, ErrClosed after Close, ErrNoMemory, ErrTooBig, ErrIO), then
// those of RestoreSession for the branch's start (a quota, the host's
// limits). It may be called from any goroutine; Interrupt stops the
// snapshot, as it stops Snapshot.
func (s *Session) Fork() (*Session, error) {
	const op = "Fork"
	data, err := s.snapshot(op)
	if err != nil {
		return nil, err
	}
	return restoreSession(op, data, s.opts)
}

// LeftOut lists what the snapshot the session was started from (by
// RestoreSession or Fork) could not carry, as SnapshotLeftOut lists it:
// one "name: reason" per item ("gen: a generator in flight"). It is nil
// for a session NewSession started, after Restart and after Close. It
// never waits, and the slice is the caller's.
func (s *Session) LeftOut() []string {
	if p := s.leftOut.Load(); p != nil {
		return append([]string(nil), (*p)...)
	}
	return nil
}

// readLeftOut caches ci_session_left_out, which only the start and Restart
// change; s.mu is held, or the session is not yet shared.
func (s *Session) readLeftOut() {
	var list []string
	if s.ptr != nil {
		list = splitLines(C.GoString(C.ci_session_left_out(s.ptr)))
	}
	if list == nil {
		s.leftOut.Store(nil)
	} else {
		s.leftOut.Store(&list)
	}
}

// splitLines splits a list of lines, each ending with a newline (the last
// may not); nil for "".
func splitLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// SnapshotLeftOut lists what the snapshot data could not carry, one entry
// per item, "name: reason" ("gen: a generator in flight", "fh: an open
// file", "link.txt: a symbolic link"): a variable's name, "Out[N]" or a
// workspace path (its bytes that are not printable ASCII read as '?'),
// then "... and N more files" if the list was cut at 1 MiB. It returns nil
// when everything was carried. data is checked as RestoreSession checks
// it, and refused with ErrInvalid if it is no snapshot. It starts no
// session and is safe from any goroutine.
func SnapshotLeftOut(data []byte) ([]string, error) {
	var list, detail *C.char
	rc := C.cigo_snapshot_left_out(bytesPointer(data), C.size_t(len(data)), &list, &detail)
	if rc != C.CI_OK {
		return nil, newError("SnapshotLeftOut", rc, takeDetail(detail))
	}
	defer C.ci_free(unsafe.Pointer(list))
	return splitLines(C.GoString(list)), nil
}
