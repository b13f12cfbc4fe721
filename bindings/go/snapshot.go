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
// failed; ErrClosed after Close. The Detail says which. A host function
// (WithFunction) that pickling calls runs as in Run, and its panic is
// raised again by Snapshot.
//
// Like the other calls, it may be made from any goroutine, one call on the
// session at a time; Interrupt and Close may be called meanwhile.
func (s *Session) Snapshot() ([]byte, error) {
	const op = "Snapshot"
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
	if s.fnPanicked { // a host function that pickling called
		p := s.fnPanic
		s.fnPanicked, s.fnPanic = false, nil
		panic(p)
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
// NewSession. A host function (WithFunction) that the state calls as it
// loads runs as in Run; if it panics, RestoreSession closes the new
// session and panics with the same value. It may be called from any
// goroutine.
func RestoreSession(data []byte, opts ...Option) (*Session, error) {
	return startSession("RestoreSession", opts, func(cfg *C.ci_config, p **C.ci_session, detail **C.char) C.int {
		return C.cigo_session_restore(p, cfg, bytesPointer(data), C.size_t(len(data)), detail)
	})
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
	text := strings.TrimSuffix(C.GoString(list), "\n")
	if text == "" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}
