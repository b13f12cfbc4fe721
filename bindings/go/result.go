package codeinterp

/*
#include <codeinterp.h>
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// Status is what happened to a cell that was handed to the worker.
type Status int

const (
	StatusOK          Status = C.CI_STATUS_OK          // it ran to the end
	StatusError       Status = C.CI_STATUS_ERROR       // it raised an exception
	StatusTimeout     Status = C.CI_STATUS_TIMEOUT     // it reached the timeout; the state is intact
	StatusMemory      Status = C.CI_STATUS_MEMORY      // it ran out of memory; the state is intact
	StatusKilled      Status = C.CI_STATUS_KILLED      // the worker died; Restart the session, unless RolledBack
	StatusInterrupted Status = C.CI_STATUS_INTERRUPTED // Interrupt stopped it; the state is intact
)

// String returns the status's one-word name, as ci_status_name gives it:
// "ok", "error", "timeout", "memory", "killed" or "interrupted"; for a
// status this binding does not know (from a newer library), "unknown(N)".
func (s Status) String() string {
	name := C.GoString(C.ci_status_name(C.ci_status(s)))
	if name == "unknown" {
		return fmt.Sprintf("unknown(%d)", int(s))
	}
	return name
}

// Truncation says what of a result was cut or left out (CI_TRUNCATED_*).
type Truncation uint

const (
	TruncatedStdout  Truncation = C.CI_TRUNCATED_STDOUT  // stdout reached the output limit
	TruncatedStderr  Truncation = C.CI_TRUNCATED_STDERR  // stderr reached the output limit
	TruncatedText    Truncation = C.CI_TRUNCATED_TEXT    // the value, error message or traceback was cut
	TruncatedOutputs Truncation = C.CI_TRUNCATED_OUTPUTS // rich outputs were left out (OutputsOmitted)
	TruncatedFiles   Truncation = C.CI_TRUNCATED_FILES   // the Files list is incomplete
)

// String names the bits set, "stdout|files", as the C names do in lower
// case; "none" for no bit.
func (t Truncation) String() string {
	return bitNames(uint(t), []string{"stdout", "stderr", "text", "outputs", "files"})
}

// OutputType is Jupyter's output_type of the message an output belongs to.
type OutputType int

const (
	DisplayData       OutputType = C.CI_OUTPUT_DISPLAY_DATA        // display() calls and matplotlib figures
	ExecuteResult     OutputType = C.CI_OUTPUT_EXECUTE_RESULT      // the last expression's rich forms
	UpdateDisplayData OutputType = C.CI_OUTPUT_UPDATE_DISPLAY_DATA // new forms for the displays of a DisplayID
	ClearOutput       OutputType = C.CI_OUTPUT_CLEAR_OUTPUT        // clear_output(): drop what was shown
)

// String returns Jupyter's name: "display_data", "execute_result",
// "update_display_data" or "clear_output".
func (t OutputType) String() string {
	switch t {
	case DisplayData:
		return "display_data"
	case ExecuteResult:
		return "execute_result"
	case UpdateDisplayData:
		return "update_display_data"
	case ClearOutput:
		return "clear_output"
	}
	return fmt.Sprintf("OutputType(%d)", int(t))
}

// Output is one representation (a MIME type and its bytes) of one rich
// output message, as a notebook shows under a cell. The representations
// of one message are consecutive, richest first. A ClearOutput is one
// Output with an empty MIME type and no data.
type Output struct {
	MIME    string     // "image/png", "text/html"...; "" for a ClearOutput
	Data    []byte     // UTF-8 text for text types, binary otherwise
	Type    OutputType // Jupyter's output_type of the message: DisplayData...
	Message int        // which message of the run, counting from 0
	// The message's display id (Jupyter's transient display_id): a
	// DisplayData's when the cell asked for one, always an
	// UpdateDisplayData's, naming the displays it replaces; "" for none.
	DisplayID string
	// A ClearOutput with wait=True: clear only when the next output comes.
	Wait bool
}

// CellError is the exception a cell raised, or for StatusKilled how the
// worker died: "WorkerDied", "SandboxViolation", "CPULimitExceeded"
// (the kernel killed it at the CPU limit), "ProtocolError",
// "TimeoutError" (it did not stop within the grace period after the
// timeout) or "KeyboardInterrupt" (nor after Interrupt). One name per
// fate, whether the cell stopped or was killed: Status tells which. It
// implements error.
type CellError struct {
	Name  string // the exception's class name: "ZeroDivisionError"
	Value string // str(exc), or a sentence on how the worker died
	// The traceback as Python prints it, showing the cell's frames
	// (File "<cell N>"); "" when there is none. Between the cell's frames
	// and the frame that raised, each run of other code's frames (the
	// standard library's, a package's) is folded into one line that
	// counts them and names their files:
	//     ... 7 frames in urllib/request.py, http/client.py ...
	Traceback string
	// The same traceback with nothing folded: every frame but the
	// worker's. The same text as Traceback when nothing was folded, and
	// "" exactly when Traceback is.
	TracebackFull string
}

// Error returns "Name: Value", or Name alone when Value is empty.
func (e *CellError) Error() string {
	if e.Value == "" {
		return e.Name
	}
	return e.Name + ": " + e.Value
}

// Result is what became of one cell. It is a plain Go value: nothing in it
// refers to C memory.
type Result struct {
	Status Status // what became of the cell: StatusOK, StatusError...
	// Everything the cell wrote to file descriptors 1 and 2, as raw bytes
	// (not necessarily UTF-8). A stream that passed the output limit is
	// its head, one marker line and its tail:
	//     [... 5905 bytes (0 lines) left out: stdout passed the output
	//     limit of 4 KiB; the whole output is in .outputs/cell-1.stdout ...]
	// and SpillFile names the file holding the whole of it.
	Stdout, Stderr string
	// The repr of the cell's last expression; HasValue is false when the
	// cell did not end with an expression, the value was None, or the
	// cell failed.
	Value    string
	HasValue bool // whether there is a Value
	// The exception or the worker's death; nil when Status is StatusOK.
	Error *CellError
	// Rich outputs (figures, display() calls, HTML tables) in order.
	Outputs        []Output
	OutputsOmitted int // outputs left out for the display limits
	// Workspace files created or modified by the run, sorted.
	Files          []string
	ExecutionCount int           // the cell's number, from 1 after each (re)start
	Truncated      Truncation    // what was cut or left out
	RolledBack     bool          // it killed the worker, and the session went back to its state before it (WithRollback)
	WallTime       time.Duration // from sending the cell to having its result (CLOCK_MONOTONIC)
	CPUTime        time.Duration // the worker's CPU time meanwhile, all threads; 0 if it died
	PeakMemory     uint64        // the worker's peak resident set size, bytes

	spill [2]string // SpillFile's answers for Stdout and Stderr
}

// SpillFile returns the workspace-relative name of the file that holds the
// whole of a stream that passed the output limit,
// ".outputs/cell-12.stdout" (cell 12's stdout), for GetFile or the next
// cell; "" when the stream was not cut, spill files are off
// (WithSpillLimit(0)) or the file could not be written (the marker line
// says why), and for a Stream other than Stdout and Stderr.
func (r *Result) SpillFile(stream Stream) string {
	if r == nil || (stream != Stdout && stream != Stderr) {
		return ""
	}
	return r.spill[stream-Stdout]
}

// Err returns the cell's error as an error value, or nil (a true nil
// interface) when the cell had none.
func (r *Result) Err() error {
	if r == nil || r.Error == nil {
		return nil
	}
	return r.Error
}

// OutputsOf returns the outputs of the given MIME type, in order.
func (r *Result) OutputsOf(mime string) []Output {
	var out []Output
	for _, o := range r.Outputs {
		if o.MIME == mime {
			out = append(out, o)
		}
	}
	return out
}

// goBytes copies n bytes at p into Go memory.
func goBytes(p unsafe.Pointer, n C.size_t) []byte {
	b := make([]byte, int(n))
	if n > 0 {
		copy(b, unsafe.Slice((*byte)(p), int(n)))
	}
	return b
}

// goStringN copies n bytes at p into a Go string.
func goStringN(p *C.char, n C.size_t) string {
	if p == nil || n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
}

// optString copies a borrowed, possibly NULL C string.
func optString(p *C.char) (string, bool) {
	if p == nil {
		return "", false
	}
	return C.GoString(p), true
}

// copyResult copies everything out of r, which the caller then frees.
func copyResult(r *C.ci_result) *Result {
	var n C.size_t
	res := &Result{Status: Status(C.ci_result_status(r))}
	p := C.ci_result_stdout(r, &n)
	res.Stdout = goStringN(p, n)
	p = C.ci_result_stderr(r, &n)
	res.Stderr = goStringN(p, n)
	res.Value, res.HasValue = optString(C.ci_result_value(r))
	if name, ok := optString(C.ci_result_error_name(r)); ok {
		e := &CellError{Name: name}
		e.Value, _ = optString(C.ci_result_error_value(r))
		e.Traceback, _ = optString(C.ci_result_traceback(r))
		e.TracebackFull, _ = optString(C.ci_result_traceback_full(r))
		res.Error = e
	}
	count := C.ci_result_output_count(r)
	if count > 0 {
		res.Outputs = make([]Output, 0, int(count))
	}
	for i := C.size_t(0); i < count; i++ {
		var dlen C.size_t
		data := C.ci_result_output_data(r, i, &dlen)
		id, _ := optString(C.ci_result_output_display_id(r, i))
		res.Outputs = append(res.Outputs, Output{
			MIME:      C.GoString(C.ci_result_output_mime(r, i)),
			Data:      goBytes(data, dlen),
			Type:      OutputType(C.ci_result_output_type(r, i)),
			Message:   int(C.ci_result_output_message(r, i)),
			DisplayID: id,
			Wait:      C.ci_result_output_wait(r, i) != 0,
		})
	}
	res.OutputsOmitted = int(C.ci_result_outputs_omitted(r))
	files := C.ci_result_file_count(r)
	if files > 0 {
		res.Files = make([]string, 0, int(files))
	}
	for i := C.size_t(0); i < files; i++ {
		res.Files = append(res.Files, C.GoString(C.ci_result_file_name(r, i)))
	}
	res.ExecutionCount = int(C.ci_result_execution_count(r))
	res.Truncated = Truncation(C.ci_result_truncated(r))
	res.RolledBack = C.ci_result_rolled_back(r) != 0
	for _, s := range []Stream{Stdout, Stderr} {
		res.spill[s-Stdout], _ = optString(C.ci_result_spill_file(r, C.int(s), nil))
	}
	res.WallTime = time.Duration(C.ci_result_wall_time_us(r)) * time.Microsecond
	res.CPUTime = time.Duration(C.ci_result_cpu_time_us(r)) * time.Microsecond
	res.PeakMemory = uint64(C.ci_result_peak_memory(r))
	return res
}
