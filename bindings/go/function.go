package codeinterp

/*
#include <stdint.h>
#include <stdlib.h>
#include <codeinterp.h>

extern void cigoFunction(uintptr_t handle, char *name, char *args, size_t len, ci_reply *reply);

static void cigo_function(void *payload, const char *name, const char *args, size_t len,
                          ci_reply *reply)
{
	cigoFunction((uintptr_t)payload, (char *)name, (char *)args, len, reply);
}

// The payload is a cgo.Handle, a number the C side only hands back.
static int cigo_add_function(ci_config *cfg, const char *name, const char *description,
                             uintptr_t handle)
{
	return ci_config_add_function(cfg, name, description, cigo_function, (void *)handle);
}
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// HostFunc is a host function: a cell's call of it runs it in the host,
// with the call's positional and keyword arguments decoded from JSON
// (numbers as json.Number, arrays as []any, objects as map[string]any).
// Its value is encoded with encoding/json and is what the call returns in
// the cell; an error it returns is raised in the cell instead, a
// *FunctionError as the exception it names, any other as a RuntimeError
// with the error's text.
type HostFunc func(args []any, kwargs map[string]any) (any, error)

// FunctionError is an error a HostFunc returns to raise a given exception
// in the cell: the builtin exception of that name when there is one that
// derives from Exception ("ValueError", "KeyError"), else HostFunctionError
// carrying the name and the message.
type FunctionError struct {
	Exception string // identifiers joined by dots, at most 128 bytes
	Message   string // what str() of the exception says; it reaches the cell
}

// Error returns "Exception: Message".
func (e *FunctionError) Error() string { return e.Exception + ": " + e.Message }

// hostFunction is what a function's C payload (a cgo.Handle) refers to,
// for the life of the session made with it: one per session, so that two
// sessions of one Option (a Fork and its parent) each raise their own
// function's panic.
type hostFunction struct {
	name    string
	fn      HostFunc
	session *Session // the one it was made for, whose Run raises its panic
}

// WithFunction defines a host function the session's cells can call:
// a builtin named name (also importable: from codeinterp_host import
// name), whose docstring is description ("" for none). It runs on the
// goroutine inside Run, one call at a time; the cell waits meanwhile and
// its timeout runs on, so a function that blocks holds Run past the
// timeout (its answer is then dropped and the cell interrupted). The
// cell's arguments must be JSON values, and are at most 1 MiB of JSON, as
// is the value (see ci_config_add_function(3)). A panic in fn is
// recovered, the cell interrupted, and the panic raised again by Run.
func WithFunction(name, description string, fn HostFunc) Option {
	return Option{"WithFunction", quote(name),
		"an ASCII Python identifier of at most 64 bytes, not a keyword or a builtin, not " +
			"starting with '_', given once, with a function; a description of at most 65536 bytes of UTF-8",
		func(c *C.ci_config) C.int {
			if fn == nil || hasNUL(name) || hasNUL(description) {
				return C.CI_EINVAL
			}
			cname := C.CString(name)
			defer C.free(unsafe.Pointer(cname))
			var cdesc *C.char
			if description != "" {
				cdesc = C.CString(description)
				defer C.free(unsafe.Pointer(cdesc))
			}
			h := cgo.NewHandle(&hostFunction{name: name, fn: fn})
			rc := C.cigo_add_function(c, cname, cdesc, C.uintptr_t(h))
			if rc != C.CI_OK {
				h.Delete()
			} else {
				pendingFunctions = append(pendingFunctions, h)
			}
			return rc
		}}
}

// pendingFunctions are the handles of the functions (and the event
// function) the options being applied added; applyOptions hands them to
// the session being started (newSessionMu keeps two calls apart).
var pendingFunctions []cgo.Handle

// WithCallLimits sets the most bytes of JSON a host function call's
// arguments and a function's value may have (default 1 MiB each).
func WithCallLimits(argsBytes, resultBytes uint64) Option {
	return Option{"WithCallLimits", fmt.Sprint(argsBytes, ", ", resultBytes),
		"each 1024 bytes to 64 MiB (67108864 bytes)",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_call_limits(c, C.size_t(argsBytes), C.size_t(resultBytes))
		}}
}

// cigoFunction is the ci_function_fn trampoline, on the goroutine inside
// ci_run_ex. Whatever fn does, it answers through reply.
//
//export cigoFunction
func cigoFunction(handle C.uintptr_t, name *C.char, args *C.char, n C.size_t, reply *C.ci_reply) {
	f := cgo.Handle(handle).Value().(*hostFunction)
	defer func() {
		if r := recover(); r != nil {
			if s := f.session; s != nil && !s.fnPanicked {
				s.fnPanicked, s.fnPanic = true, r
				s.Interrupt()
			}
			replyError(reply, "RuntimeError", fmt.Sprintf("the host function %s() panicked", f.name))
		}
	}()
	var call struct {
		Args   []any          `json:"args"`
		Kwargs map[string]any `json:"kwargs"`
	}
	dec := json.NewDecoder(bytes.NewReader(goBytes(unsafe.Pointer(args), n)))
	dec.UseNumber()
	if err := dec.Decode(&call); err != nil {
		replyError(reply, "ValueError", "the host could not decode the arguments: "+err.Error())
		return
	}
	value, err := f.fn(call.Args, call.Kwargs)
	var fe *FunctionError
	switch {
	case errors.As(err, &fe):
		replyError(reply, fe.Exception, fe.Message)
		return
	case err != nil:
		replyError(reply, "RuntimeError", err.Error())
		return
	}
	data, err := json.Marshal(value)
	if err != nil {
		replyError(reply, "TypeError", fmt.Sprintf("the host function %s() returned a value "+
			"that is not JSON: %v", f.name, err))
		return
	}
	if C.ci_reply_json(reply, (*C.char)(unsafe.Pointer(&data[0])), C.size_t(len(data))) != C.CI_OK {
		replyError(reply, "ValueError", fmt.Sprintf("the host function %s() returned %d bytes "+
			"of JSON, over the result limit", f.name, len(data)))
	}
}

// replyError answers with an exception; a name the library refuses
// becomes RuntimeError, a message that is not UTF-8 or has a NUL is
// cleaned up first.
func replyError(reply *C.ci_reply, exception, message string) {
	msg := bytes.ToValidUTF8(bytes.ReplaceAll([]byte(message), []byte{0}, []byte(`\0`)), []byte("\uFFFD"))
	if len(msg) > 65536 {
		msg = bytes.ToValidUTF8(msg[:65536], nil)
	}
	cmsg := C.CString(string(msg))
	defer C.free(unsafe.Pointer(cmsg))
	cname := C.CString(exception)
	defer C.free(unsafe.Pointer(cname))
	if hasNUL(exception) || C.ci_reply_error(reply, cname, cmsg) != C.CI_OK {
		crt := C.CString("RuntimeError")
		defer C.free(unsafe.Pointer(crt))
		C.ci_reply_error(reply, crt, cmsg)
	}
}
