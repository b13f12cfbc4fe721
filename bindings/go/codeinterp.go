// Package codeinterp is the Go binding of libcodeinterp, a sandboxed,
// stateful Python interpreter for AI agents.
//
// A Session owns one sandboxed worker process that embeds CPython with
// numpy, pandas and matplotlib already imported. Run executes a cell in it,
// keeping the interpreter state for the next cell as a notebook does, and
// returns a Result: a plain Go value copied out of the C result, which is
// freed before Run returns.
//
//	s, err := codeinterp.NewSession(codeinterp.WithTimeout(10 * time.Second))
//	if err != nil { ... }
//	defer s.Close()
//	res, err := s.Run("x = 6 * 7\nx")
//	if err != nil { ... }          // the call failed (dead worker, busy...)
//	if res.Status == codeinterp.StatusOK {
//		fmt.Println(res.Value)   // "42"
//	}
//
// As in the C library, what happens to a cell (an exception, a timeout, a
// killed worker) is not a failed call: Run returns a nil error and the
// Result's Status says what happened. Failed calls return an error that
// wraps a Code, so errors.Is(err, codeinterp.ErrDead) and friends work, and
// errors.As(err, &e) with e a *codeinterp.Error gives the library's detail.
//
// The package links libcodeinterp through pkg-config ("codeinterp"). Its
// import path is codeinterp.dev/go/codeinterp; see the README for the one
// replace directive a module needs while that path has no public host.
package codeinterp

/*
#cgo pkg-config: codeinterp
#include <stdlib.h>
#include <codeinterp.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Version returns the version of the libcodeinterp the program runs with,
// "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.ci_version()) }

// Code is one of the library's negative return codes. Codes are errors:
// the errors returned by this package wrap one, so errors.Is(err, ErrDead)
// tells a dead worker apart from other failures.
type Code int

// The library's return codes (CI_E* in codeinterp.h).
const (
	ErrInvalid  Code = C.CI_EINVAL    // invalid argument
	ErrNoMemory Code = C.CI_ENOMEM    // out of memory
	ErrSpawn    Code = C.CI_ESPAWN    // the worker could not be started
	ErrDead     Code = C.CI_EDEAD     // the worker is dead; call Restart
	ErrBusy     Code = C.CI_EBUSY     // another call is in progress on the session
	ErrProtocol Code = C.CI_EPROTO    // the worker broke the protocol
	ErrIO       Code = C.CI_EIO       // input/output error
	ErrNotFound Code = C.CI_ENOENT    // no such file in the workspace
	ErrTooBig   Code = C.CI_ETOOBIG   // size over the limit
	ErrUnsafe   Code = C.CI_EUNSAFE   // refused: a link, or not a regular file
	ErrSandbox  Code = C.CI_ESANDBOX  // a required sandbox layer is not available
	ErrManifest Code = C.CI_EMANIFEST // the package manifest is malformed, badly signed, or does not match
)

// Error returns the library's message for the code (ci_strerror), with
// the C functions it names given as this package's (ErrDead's "call
// Session.Restart").
func (c Code) Error() string { return goNames(C.GoString(C.ci_strerror(C.int(c)))) }

// ErrClosed is returned (wrapped) by calls on a session after Close.
var ErrClosed = errors.New("codeinterp: session is closed")

// Error is a failed call: the operation, the library's code, its message
// for the code (ci_strerror) and the detail of this failure, which may be
// empty. The detail names the argument that was refused and why, in this
// package's terms (`name "../x" has a ".." component: ...`,
// `WithTimeout(0s) refused: ...`), or is the library's own
// (ci_session_errmsg) with the C functions it names given as this
// package's methods. It unwraps to its Code.
type Error struct {
	Op      string // the method or function that failed: "NewSession", "Run", "PutFile", "RestoreSession", "Fork"...
	Code    Code   // the library's return code; errors.Is(err, ErrDead) compares it
	Message string // ci_strerror(Code), C names given as Go's
	Detail  string // what was wrong this time; "" when there is nothing to add
}

// Error returns "codeinterp: Op: Message: Detail" (no Detail when empty).
func (e *Error) Error() string {
	msg := "codeinterp: " + e.Op + ": " + e.Message
	if e.Detail != "" && e.Detail != e.Message {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns e.Code, for errors.Is(err, ErrDead) and the like.
func (e *Error) Unwrap() error { return e.Code }

func newError(op string, rc C.int, detail string) *Error {
	c := Code(rc)
	return &Error{Op: op, Code: c, Message: c.Error(), Detail: goNames(detail)}
}

// cPrefix is the "ci_session_get_file: " that opens some of the library's
// messages: Op already names the call, in Go's terms.
var cPrefix = regexp.MustCompile(`^ci_[a-z0-9_]+: `)

// cName is a C function's name in one of the library's messages.
var cName = regexp.MustCompile(`\bci_[a-z0-9_]+\b`)

// goName is the Go for each C function a message may name.
var goName = map[string]string{
	"ci_session_new":       "NewSession",
	"ci_session_restart":   "Session.Restart",
	"ci_session_interrupt": "Session.Interrupt",
	"ci_session_put_file":  "Session.PutFile",
	"ci_session_get_file":  "Session.GetFile",
	"ci_session_free":      "Session.Close",
	"ci_session_snapshot":  "Session.Snapshot",
	"ci_session_restore":   "RestoreSession",
	"ci_session_fork":      "Session.Fork",
	"ci_session_left_out":  "Session.LeftOut",
	"ci_snapshot_left_out": "SnapshotLeftOut",
	"ci_run":               "Session.Run",
	"ci_run_ex":            "Session.RunWithOptions",
	"ci_run_stream":        "Session.RunWithOptions",
}

// goNames turns a message of the library into this package's terms: no
// leading "ci_xxx: ", and Session.Restart where it says ci_session_restart.
func goNames(msg string) string {
	msg = cPrefix.ReplaceAllString(msg, "")
	return cName.ReplaceAllStringFunc(msg, func(c string) string {
		if g, ok := goName[c]; ok {
			return g
		}
		return c
	})
}

// quote shows an argument in a message: quoted, and cut to 100 bytes.
func quote(s string) string {
	if len(s) > 100 {
		return fmt.Sprintf("%q... (%d bytes)", s[:100], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// maxNameBytes is the longest file name the library takes (PATH_MAX - 1).
const maxNameBytes = 4095

// checkName refuses a workspace file name the library would refuse, saying
// why: the library's rule is a path relative to the workspace, "/"
// between existing directories, no empty, "." or ".." component.
func checkName(op, name string) error {
	problem := ""
	switch {
	case name == "":
		problem = "is empty"
	case hasNUL(name):
		problem = "holds a NUL byte"
	case len(name) > maxNameBytes:
		problem = fmt.Sprintf("is over %d bytes", maxNameBytes)
	case name[0] == '/':
		problem = "is absolute"
	default:
		for _, c := range strings.Split(name, "/") {
			if c == "" {
				problem = "has an empty component (\"//\" or a trailing \"/\")"
				break
			}
			if c == "." || c == ".." {
				problem = fmt.Sprintf("has a %q component", c)
				break
			}
		}
	}
	if problem == "" {
		return nil
	}
	return newError(op, C.CI_EINVAL, fmt.Sprintf("name %s %s: a name is a path relative to "+
		"the workspace, without empty, \".\" or \"..\" components", quote(name), problem))
}

func closedError(op string) error { return fmt.Errorf("codeinterp: %s: %w", op, ErrClosed) }

// hasNUL reports whether s cannot be passed to C as a string.
func hasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }

// bitNames formats a mask as "a|b|0x400" from its known bits' names.
func bitNames(mask uint, names []string) string {
	if mask == 0 {
		return "none"
	}
	var parts []string
	for i, n := range names {
		if mask&(1<<uint(i)) != 0 {
			parts = append(parts, n)
			mask &^= 1 << uint(i)
		}
	}
	if mask != 0 {
		parts = append(parts, fmt.Sprintf("%#x", mask))
	}
	return strings.Join(parts, "|")
}
