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
	"strings"
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
	input    func(string, bool) (string, bool)
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

// maxAnswerBytes is the longest answer ci_input_fn may give (1 MiB).
const maxAnswerBytes = 1 << 20

// cigoInput is the ci_input_fn trampoline, on the goroutine inside
// ci_run_ex as cigoOutput is. It answers with a copy in C memory, which
// the library frees; a refusal, an answer with a NUL byte or over 1 MiB,
// and a panic (recovered, the cell interrupted, raised again by Run)
// return -1.
//
//export cigoInput
func cigoInput(prompt *C.char, password C.int, reply **C.char, handle C.uintptr_t) (rc C.int) {
	st := cgo.Handle(handle).Value().(*runState)
	if st.panicked {
		return -1
	}
	defer func() {
		if r := recover(); r != nil {
			st.panicked, st.panicVal = true, r
			st.s.Interrupt()
			rc = -1
		}
	}()
	answer, ok := st.input(C.GoString(prompt), password != 0)
	if !ok || len(answer) > maxAnswerBytes || strings.IndexByte(answer, 0) >= 0 {
		return -1
	}
	*reply = C.CString(answer) // malloc(3)'d, as the library frees it
	return 0
}

// cBool is 1 for true, 0 for false.
func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
