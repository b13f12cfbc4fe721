package codeinterp

// This file holds the one //export; cgo then allows only declarations in
// its preamble, so the C shim that calls it lives in session.go.

/*
#include <stddef.h>
#include <stdint.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// Stream names a stream of a cell's output.
type Stream int

const (
	Stdout Stream = 1 // CI_STREAM_STDOUT
	Stderr Stream = 2 // CI_STREAM_STDERR
)

// String returns "stdout" or "stderr" ("stream(N)" for another value).
func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	}
	return "Stream(?)"
}

// runState is what the C callback's payload (a cgo.Handle) refers to for
// the length of one run.
type runState struct {
	s        *Session
	fn       func(Stream, []byte)
	panicked bool
	panicVal interface{}
}

// cigoOutput is the ci_output_fn trampoline: C calls it, through the shim
// cigo_output, on the thread (and so the goroutine) that is inside
// ci_run_ex. A panic in the user's function is not let through the C
// frames: it is recovered, the cell interrupted, and the panic raised again
// by Run once the library has returned.
//
//export cigoOutput
func cigoOutput(stream C.int, data *C.char, n C.size_t, handle C.uintptr_t) {
	st := cgo.Handle(handle).Value().(*runState)
	if st.panicked {
		return
	}
	b := goBytes(unsafe.Pointer(data), n)
	defer func() {
		if r := recover(); r != nil {
			st.panicked, st.panicVal = true, r
			st.s.Interrupt()
		}
	}()
	st.fn(Stream(stream), b)
}
