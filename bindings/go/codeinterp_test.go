package codeinterp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// shared is one session for the tests that leave its worker alive and do
// not depend on a fresh state; sessions take about 0.6 s to start.
var shared *Session

func TestMain(m *testing.M) {
	var err error
	shared, err = NewSession(WithTimeout(20 * time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, "NewSession:", err)
		os.Exit(1)
	}
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

func run(t *testing.T, s *Session, code string) *Result {
	t.Helper()
	res, err := s.Run(code)
	if err != nil {
		t.Fatalf("Run(%q): %v", code, err)
	}
	return res
}

func TestSessionInfo(t *testing.T) {
	if v := Version(); !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) {
		t.Errorf("Version() = %q", v)
	}
	pid := shared.PID()
	if pid <= 0 {
		t.Fatalf("PID() = %d", pid)
	}
	if shared.Pid() != pid || shared.Closed() {
		t.Errorf("Pid() = %d, Closed() = %v", shared.Pid(), shared.Closed())
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		t.Errorf("worker %d not running: %v", pid, err)
	}
	ws := shared.Workspace()
	if !strings.HasPrefix(ws, "/") || !strings.HasSuffix(ws, "/workspace") {
		t.Errorf("Workspace() = %q", ws)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		t.Errorf("workspace %s: %v", ws, err)
	}
	need := SandboxSeccomp | SandboxRlimits | SandboxNoNewPrivs
	if sb := shared.Sandbox(); sb&need != need {
		t.Errorf("Sandbox() = %v, want at least %v", sb, need)
	}
	if os.Geteuid() == 0 && shared.Sandbox()&SandboxUnprivileged == 0 {
		t.Errorf("root host, but the worker is not unprivileged: %v", shared.Sandbox())
	}
	if got := (SandboxSeccomp | SandboxLandlock).String(); got != "seccomp|landlock" {
		t.Errorf("Sandbox.String() = %q", got)
	}
}

func TestStateAcrossCells(t *testing.T) {
	r1 := run(t, shared, "import numpy as np\nx = np.arange(10)\nprint('sum', x.sum())")
	if r1.Status != StatusOK || r1.Stdout != "sum 45\n" || r1.HasValue {
		t.Fatalf("cell 1: %+v", r1)
	}
	r2 := run(t, shared, "y = x * 2\ny.mean()")
	if r2.Status != StatusOK || !r2.HasValue || r2.Value != "9.0" {
		t.Fatalf("cell 2: status %v value %q (%v)", r2.Status, r2.Value, r2.HasValue)
	}
	if r2.ExecutionCount != r1.ExecutionCount+1 {
		t.Errorf("execution counts %d then %d", r1.ExecutionCount, r2.ExecutionCount)
	}
	if r2.Error != nil || r2.Err() != nil {
		t.Errorf("Error = %v, Err() = %v", r2.Error, r2.Err())
	}
	if r2.WallTime <= 0 || r2.WallTime > 10*time.Second {
		t.Errorf("WallTime = %v", r2.WallTime)
	}
	r3 := run(t, shared, "import sys\nsys.stderr.write('warn\\n')\nNone")
	if r3.Stderr != "warn\n" || r3.HasValue {
		t.Errorf("stderr %q, value %q (%v)", r3.Stderr, r3.Value, r3.HasValue)
	}
}

func TestException(t *testing.T) {
	res := run(t, shared, "def f(a):\n    return a / 0\nf(1)")
	if res.Status != StatusError || res.Status.String() != "error" {
		t.Fatalf("status %v", res.Status)
	}
	if res.Error == nil || res.Error.Name != "ZeroDivisionError" || res.Error.Value != "division by zero" {
		t.Fatalf("error %+v", res.Error)
	}
	if !strings.Contains(res.Error.Traceback, "ZeroDivisionError") || !strings.Contains(res.Error.Traceback, "<cell") {
		t.Errorf("traceback %q", res.Error.Traceback)
	}
	// Only the cell's frames: nothing to fold.
	if res.Error.TracebackFull != res.Error.Traceback {
		t.Errorf("full traceback %q, folded %q", res.Error.TracebackFull, res.Error.Traceback)
	}
	var ce *CellError
	if err := res.Err(); !errors.As(err, &ce) || err.Error() != "ZeroDivisionError: division by zero" {
		t.Errorf("Err() = %v", err)
	}
	if res.HasValue {
		t.Errorf("a failed cell has value %q", res.Value)
	}
	// The session goes on.
	if r := run(t, shared, "1 + 1"); r.Value != "2" {
		t.Errorf("after the exception: %q", r.Value)
	}
}

// foldLine is the line that stands for the frames folded out of a traceback.
var foldLine = regexp.MustCompile(`(?m)^    \.\.\. [0-9]+ frames? in \S`)

func TestFoldedTraceback(t *testing.T) {
	res := run(t, shared, "import pandas as pd\npd.DataFrame({'a':[1]})['b']")
	if res.Status != StatusError || res.Error == nil || res.Error.Name != "KeyError" || res.Error.Value != "'b'" {
		t.Fatalf("status %v error %+v", res.Status, res.Error)
	}
	tb, full := res.Error.Traceback, res.Error.TracebackFull
	cell := fmt.Sprintf(`File "<cell %d>", line 2, in <module>`, res.ExecutionCount)
	if !strings.Contains(tb, "frames in") && !strings.Contains(tb, "frame in") {
		t.Errorf("nothing folded in %q", tb)
	}
	if !foldLine.MatchString(tb) || !strings.Contains(tb, cell) ||
		!strings.Contains(tb, "pandas/core/frame.py") || strings.Contains(tb, `core/frame.py", line`) {
		t.Errorf("folded traceback %q", tb)
	}
	if len(full) <= len(tb) || foldLine.MatchString(full) || !strings.Contains(full, cell) ||
		!strings.Contains(full, `pandas/core/frame.py", line`) {
		t.Errorf("full traceback (%d bytes, folded %d) %q", len(full), len(tb), full)
	}
	if !strings.HasSuffix(tb, "KeyError: 'b'\n") || !strings.HasSuffix(full, "KeyError: 'b'\n") {
		t.Errorf("tracebacks end %q and %q", tb[len(tb)-20:], full[len(full)-20:])
	}
}

func TestTimeout(t *testing.T) {
	start := time.Now()
	res, err := shared.RunWithOptions("while True: pass", RunOptions{Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusTimeout || res.Error == nil || res.Error.Name != "TimeoutError" {
		t.Fatalf("status %v, error %+v", res.Status, res.Error)
	}
	if el := time.Since(start); el < 300*time.Millisecond || el > 5*time.Second {
		t.Errorf("timed out after %v", el)
	}
	if res.CPUTime < 30*time.Millisecond {
		t.Errorf("CPUTime %v for a busy loop of 300 ms", res.CPUTime)
	}
	run(t, shared, "after_timeout = 'still here'")
	if r := run(t, shared, "after_timeout"); r.Status != StatusOK || r.Value != "'still here'" {
		t.Errorf("after the timeout: %v %q", r.Status, r.Value)
	}
}

func TestFigure(t *testing.T) {
	res := run(t, shared, "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('t')\nNone")
	if res.Status != StatusOK {
		t.Fatalf("status %v: %v", res.Status, res.Err())
	}
	pngs := res.OutputsOf("image/png")
	if len(pngs) != 1 {
		t.Fatalf("%d image/png outputs in %d outputs", len(pngs), len(res.Outputs))
	}
	png := pngs[0]
	if !bytes.HasPrefix(png.Data, []byte("\x89PNG\r\n\x1a\n")) || len(png.Data) < 1000 {
		t.Errorf("not a PNG: %d bytes %q", len(png.Data), png.Data[:8])
	}
	if png.Type != DisplayData || png.Message != 0 {
		t.Errorf("type %v message %d", png.Type, png.Message)
	}
	// A DataFrame as the last expression gives text/html as execute_result.
	res = run(t, shared, "import pandas as pd\npd.DataFrame({'a': [1, 2]})")
	html := res.OutputsOf("text/html")
	if len(html) != 1 || html[0].Type != ExecuteResult || !bytes.Contains(html[0].Data, []byte("<table")) {
		t.Errorf("html outputs %+v", res.Outputs)
	}
	if !res.HasValue || !strings.Contains(res.Value, "a") {
		t.Errorf("value %q", res.Value)
	}
}

// TestDisplayUpdateAndClear needs the worker that sends
// update_display_data and clear_output (lib/worker/runner.py, proto.h
// version 2).
func TestDisplayUpdateAndClear(t *testing.T) {
	res := run(t, shared, "from IPython.display import display, clear_output\n"+
		"h = display('a', display_id=True)\nh.update('b')\nclear_output(wait=True)")
	if res.Status != StatusOK || len(res.Outputs) != 3 {
		t.Fatalf("status %v, outputs %+v: %v", res.Status, res.Outputs, res.Err())
	}
	shown, update, clear := res.Outputs[0], res.Outputs[1], res.Outputs[2]
	if shown.Type != DisplayData || shown.Message != 0 || string(shown.Data) != "'a'" ||
		shown.DisplayID == "" || shown.Wait {
		t.Errorf("display %+v", shown)
	}
	if update.Type != UpdateDisplayData || update.Message != 1 || string(update.Data) != "'b'" ||
		update.DisplayID != shown.DisplayID || update.Wait {
		t.Errorf("update %+v", update)
	}
	if clear.Type != ClearOutput || clear.Message != 2 || clear.MIME != "" ||
		len(clear.Data) != 0 || clear.DisplayID != "" || !clear.Wait {
		t.Errorf("clear %+v", clear)
	}
	if UpdateDisplayData.String() != "update_display_data" || ClearOutput.String() != "clear_output" {
		t.Errorf("names %v %v", UpdateDisplayData, ClearOutput)
	}
}

func TestFiles(t *testing.T) {
	csv := "city,temp\nOslo,4\nCairo,30\nLima,19\n"
	if err := shared.PutFile("temps.csv", []byte(csv)); err != nil {
		t.Fatal(err)
	}
	res := run(t, shared, `import pandas as pd
df = pd.read_csv('temps.csv')
df['temp_f'] = df.temp * 9 / 5 + 32
import os
os.makedirs('out', exist_ok=True)
df.to_csv('out/temps_f.csv', index=False)
open('summary.txt', 'w').write(f"mean={df.temp.mean():.2f}\n")
float(df.temp_f.max())`)
	if res.Status != StatusOK {
		t.Fatalf("status %v: %v", res.Status, res.Err())
	}
	if res.Value != "86.0" {
		t.Errorf("value %q", res.Value)
	}
	want := []string{"out/temps_f.csv", "summary.txt"}
	if !sort.StringsAreSorted(res.Files) || strings.Join(res.Files, ",") != strings.Join(want, ",") {
		t.Errorf("Files = %q, want %q", res.Files, want)
	}
	got, err := shared.GetFile("summary.txt")
	if err != nil || string(got) != "mean=17.67\n" {
		t.Errorf("summary.txt = %q, %v", got, err)
	}
	got, err = shared.GetFile("out/temps_f.csv")
	if err != nil || !strings.HasPrefix(string(got), "city,temp,temp_f\nOslo,4,39.2\n") {
		t.Errorf("out/temps_f.csv = %q, %v", got, err)
	}
	// Binary data and the empty file round-trip.
	bin := []byte{0, 1, 2, 255, 0, 10}
	if err := shared.PutFile("bin.dat", bin); err != nil {
		t.Fatal(err)
	}
	if got, err := shared.GetFile("bin.dat"); err != nil || !bytes.Equal(got, bin) {
		t.Errorf("bin.dat = %v, %v", got, err)
	}
	if err := shared.PutFile("empty", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := shared.GetFile("empty"); err != nil || len(got) != 0 || got == nil {
		t.Errorf("empty = %v, %v", got, err)
	}
}

func TestFileErrors(t *testing.T) {
	_, err := shared.GetFile("no-such-file")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetFile(missing) = %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrNotFound || e.Op != "GetFile" || e.Message != ErrNotFound.Error() {
		t.Errorf("error %#v", e)
	}
	if errors.Is(err, ErrDead) {
		t.Errorf("%v is ErrDead", err)
	}
	for _, name := range []string{"../escape", "/etc/passwd", "", "a\x00b"} {
		if err := shared.PutFile(name, []byte("x")); !errors.Is(err, ErrInvalid) {
			t.Errorf("PutFile(%q) = %v", name, err)
		}
	}
	run(t, shared, "import os\nos.makedirs('d', exist_ok=True)")
	if _, err := shared.GetFile("d"); !errors.Is(err, ErrUnsafe) {
		t.Errorf("GetFile(directory) = %v", err)
	}
}

func TestStreaming(t *testing.T) {
	type chunk struct {
		stream Stream
		data   string
		at     time.Time
	}
	var chunks []chunk
	start := time.Now()
	res, err := shared.RunWithOptions(`import sys, time
for i in range(3):
    print('line', i, flush=True)
    time.sleep(0.2)
sys.stderr.write('err\n'); sys.stderr.flush()
'done'`, RunOptions{OnOutput: func(s Stream, data []byte) {
		chunks = append(chunks, chunk{s, string(data), time.Now()})
	}})
	end := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusOK || res.Value != "'done'" {
		t.Fatalf("status %v value %q", res.Status, res.Value)
	}
	var out, errOut strings.Builder
	for _, c := range chunks {
		switch c.stream {
		case Stdout:
			out.WriteString(c.data)
		case Stderr:
			errOut.WriteString(c.data)
		default:
			t.Errorf("stream %v", c.stream)
		}
	}
	if out.String() != res.Stdout || res.Stdout != "line 0\nline 1\nline 2\n" {
		t.Errorf("streamed stdout %q, result %q", out.String(), res.Stdout)
	}
	if errOut.String() != "err\n" || res.Stderr != "err\n" {
		t.Errorf("streamed stderr %q, result %q", errOut.String(), res.Stderr)
	}
	if len(chunks) < 3 {
		t.Fatalf("%d chunks, want one a line at least", len(chunks))
	}
	// The first line arrives while the cell still sleeps.
	if lead := end.Sub(chunks[0].at); lead < 300*time.Millisecond {
		t.Errorf("first chunk %v after start, only %v before the end", chunks[0].at.Sub(start), lead)
	}
}

// The callback gets whole lines: a partial line left waiting on its own,
// and a line of 16 KiB or more in pieces cut after a whole character.
func TestStreamingWholeLines(t *testing.T) {
	var chunks []string
	// One write a line: print() writes its text and its end apart, which a
	// loaded machine can part by more than the 5 ms a partial line waits.
	res, err := shared.RunWithOptions("import sys, time\nsys.stdout.write('a\\n')\n"+
		"sys.stdout.write('progress'); sys.stdout.flush()\ntime.sleep(0.3)\n"+
		"sys.stdout.write(' done\\n')\nsys.stdout.write('x' + '\u00e9' * 20000 + '\\n')\n"+
		"sys.stdout.write('b\\n')",
		RunOptions{OnOutput: func(s Stream, data []byte) { chunks = append(chunks, string(data)) }})
	if err != nil || res.Status != StatusOK {
		t.Fatalf("%v %v", err, res)
	}
	if strings.Join(chunks, "") != res.Stdout {
		t.Errorf("streamed %d bytes, result %d", len(strings.Join(chunks, "")), len(res.Stdout))
	}
	if len(chunks) < 4 || chunks[0] != "a\n" || chunks[1] != "progress" || chunks[2] != " done\n" {
		t.Fatalf("chunks %.40q", chunks)
	}
	if rest := strings.Join(chunks[3:], ""); rest != "x"+strings.Repeat("\u00e9", 20000)+"\nb\n" {
		t.Errorf("the long line and b streamed as %d bytes", len(rest))
	}
	for i, c := range chunks[3:] {
		if !utf8.ValidString(c) || (!strings.HasSuffix(c, "\n") && len(c) < 16381) {
			t.Errorf("chunk %d: %d bytes, valid UTF-8 %v, ends %q", i+3, len(c), utf8.ValidString(c), c[len(c)-2:])
		}
	}
}

// Past the output limit the callback gets one note line and nothing more.
func TestStreamingNotePastTheLimit(t *testing.T) {
	s, err := NewSession(WithOutputLimit(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var streamed strings.Builder
	res, err := s.RunWithOptions("for i in range(2000):\n    print(i)", RunOptions{OnOutput: func(st Stream, data []byte) {
		if st != Stdout {
			t.Errorf("stream %v", st)
		}
		streamed.Write(data)
	}})
	if err != nil {
		t.Fatal(err)
	}
	var whole strings.Builder
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&whole, "%d\n", i)
	}
	got := streamed.String()
	if len(got) < 4096 || got[:4096] != whole.String()[:4096] {
		t.Fatalf("streamed %d bytes: %.60q", len(got), got)
	}
	note := got[4096:]
	if !strings.HasPrefix(note, "\n[... stdout passed the output limit of 4 KiB") ||
		!strings.HasSuffix(note, "the whole output goes to .outputs/cell-1.stdout ...]\n") ||
		strings.Count(note, "\n") != 2 {
		t.Errorf("note %q", note)
	}
	if f := res.SpillFile(Stdout); f != ".outputs/cell-1.stdout" {
		t.Errorf("SpillFile(Stdout) = %q", f)
	}
}

func TestCallbackPanic(t *testing.T) {
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		shared.RunWithOptions("print('x', flush=True)\nimport time\nwhile True: time.sleep(0.01)",
			RunOptions{OnOutput: func(Stream, []byte) { panic("boom") }})
		t.Error("RunWithOptions returned")
	}()
	// The panic interrupted the cell and released the session.
	if r := run(t, shared, "6 * 7"); r.Value != "42" {
		t.Errorf("after the panic: %v %q", r.Status, r.Value)
	}
}

func TestInterruptAndBusy(t *testing.T) {
	started := make(chan struct{}, 1)
	var wg sync.WaitGroup
	var interrupted bool
	var busyErr, putErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-started
		_, busyErr = shared.Run("1")
		putErr = shared.PutFile("during.txt", []byte("x"))
		if pid := shared.PID(); pid <= 0 {
			t.Errorf("PID() during a run = %d", pid)
		}
		time.Sleep(100 * time.Millisecond)
		interrupted = shared.Interrupt()
	}()
	start := time.Now()
	res, err := shared.RunWithOptions("kept = 'yes'\nprint('go', flush=True)\nwhile True: pass",
		RunOptions{OnOutput: func(Stream, []byte) {
			select {
			case started <- struct{}{}:
			default:
			}
		}})
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !interrupted {
		t.Error("Interrupt() = false during a run")
	}
	if res.Status != StatusInterrupted || res.Error == nil || res.Error.Name != "KeyboardInterrupt" {
		t.Fatalf("status %v error %+v", res.Status, res.Error)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("interrupt took %v", el)
	}
	if !errors.Is(busyErr, ErrBusy) || !errors.Is(putErr, ErrBusy) {
		t.Errorf("concurrent calls: %v / %v", busyErr, putErr)
	}
	if shared.Interrupt() {
		t.Error("Interrupt() = true with no cell running")
	}
	if r := run(t, shared, "kept"); r.Value != "'yes'" {
		t.Errorf("state after interrupt: %v %q", r.Status, r.Value)
	}
}

func TestKilledAndRestart(t *testing.T) {
	s, err := NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run(t, s, "a = 1")
	if err := s.PutFile("keep.txt", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	res := run(t, s, "import os\nos._exit(3)")
	if res.Status != StatusKilled || res.Error == nil || res.Error.Name != "WorkerDied" {
		t.Fatalf("status %v error %+v", res.Status, res.Error)
	}
	if s.PID() != -1 || s.Sandbox() != 0 {
		t.Errorf("dead worker: pid %d sandbox %v", s.PID(), s.Sandbox())
	}
	if res.RolledBack || s.RollbackActive() || strings.Contains(res.Error.Value, "rolled back") {
		t.Errorf("without WithRollback: RolledBack %v, RollbackActive %v, %q",
			res.RolledBack, s.RollbackActive(), res.Error.Value)
	}
	_, err = s.Run("1")
	if !errors.Is(err, ErrDead) {
		t.Fatalf("Run on a dead session: %v", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.PID() <= 0 {
		t.Errorf("pid after restart %d", s.PID())
	}
	res = run(t, s, "'a' in globals(), open('keep.txt').read()")
	if res.Value != "(False, 'kept')" || res.ExecutionCount != 1 {
		t.Errorf("after restart: %q count %d", res.Value, res.ExecutionCount)
	}
}

// WithRollback(true): a cell that kills the worker leaves the session as
// it was just before the cell, again and again, in its branches too.
func TestRollback(t *testing.T) {
	s, err := NewSession(WithTimeout(2*time.Second), WithGrace(300*time.Millisecond),
		WithRollback(true))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.RollbackActive() {
		t.Fatalf("WithRollback(true): RollbackActive false, sandbox %v", s.Sandbox())
	}
	run(t, s, "x = 41")
	pid := s.PID()
	res := run(t, s, "import os; os._exit(3)")
	if res.Status != StatusKilled || !res.RolledBack || res.Error == nil || res.Error.Name != "WorkerDied" ||
		!strings.Contains(res.Error.Value, "exited with status 3") {
		t.Fatalf("os._exit(3): status %v RolledBack %v error %+v", res.Status, res.RolledBack, res.Error)
	}
	// The checkpoint took the killed worker's place.
	if s.PID() <= 0 || s.PID() == pid || !s.RollbackActive() {
		t.Errorf("after the rollback: pid %d (was %d), RollbackActive %v", s.PID(), pid, s.RollbackActive())
	}
	if res = run(t, s, "x"); res.Value != "41" || res.RolledBack || res.ExecutionCount != 3 {
		t.Errorf("x after the rollback: %q RolledBack %v count %d", res.Value, res.RolledBack, res.ExecutionCount)
	}
	// Killed after the grace period: rolled back too.
	res = run(t, s, "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nx = 0\ntime.sleep(30)")
	if res.Status != StatusKilled || !res.RolledBack || res.Error.Name != "TimeoutError" {
		t.Errorf("killed at the timeout: status %v RolledBack %v error %+v", res.Status, res.RolledBack, res.Error)
	}
	if v := run(t, s, "x + 1").Value; v != "42" {
		t.Errorf("x + 1 after the second rollback: %q", v)
	}
	// A branch has its parent's options, WithRollback among them.
	b, err := s.Fork()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if res = run(t, b, "import os; os._exit(1)"); !b.RollbackActive() || !res.RolledBack {
		t.Errorf("a branch: RollbackActive %v, RolledBack %v", b.RollbackActive(), res.RolledBack)
	}
	if v := run(t, b, "x").Value; v != "41" {
		t.Errorf("x in the rolled back branch: %q", v)
	}
}

// Rollback needs a worker forked from the zygote (a PID namespace): a
// worker started by exec runs without it, and a killed cell leaves the
// session dead.
func TestRollbackNeedsTheZygote(t *testing.T) {
	s, err := NewSession(WithRollback(true), WithZygote(false))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.RollbackActive() || s.Sandbox()&SandboxPIDNS != 0 {
		t.Errorf("WithZygote(false): RollbackActive %v, sandbox %v", s.RollbackActive(), s.Sandbox())
	}
	if res := run(t, s, "import os; os._exit(3)"); res.Status != StatusKilled || res.RolledBack {
		t.Errorf("os._exit(3): status %v RolledBack %v", res.Status, res.RolledBack)
	}
	if _, err := s.Run("1"); !errors.Is(err, ErrDead) {
		t.Errorf("Run after a kill without rollback: %v", err)
	}
}

func TestClose(t *testing.T) {
	s, err := NewSession()
	if err != nil {
		t.Fatal(err)
	}
	pid, ws := s.PID(), s.Workspace()
	run(t, s, "x = 1")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Run("x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
	if _, err := s.GetFile("a"); !errors.Is(err, ErrClosed) {
		t.Errorf("GetFile after Close: %v", err)
	}
	if err := s.PutFile("a", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("PutFile after Close: %v", err)
	}
	if err := s.Restart(); !errors.Is(err, ErrClosed) {
		t.Errorf("Restart after Close: %v", err)
	}
	if s.Interrupt() || s.PID() != -1 || s.Sandbox() != 0 || !s.Closed() {
		t.Errorf("after Close: pid %d sandbox %v closed %v", s.PID(), s.Sandbox(), s.Closed())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker %d still exists after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Errorf("workspace %s still there: %v", ws, err)
	}
}

func TestCloseDuringRun(t *testing.T) {
	s, err := NewSession()
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once sync.Once
	done := make(chan *Result)
	go func() {
		res, err := s.RunWithOptions("print('go', flush=True)\nwhile True: pass",
			RunOptions{OnOutput: func(Stream, []byte) { once.Do(func() { close(started) }) }})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res == nil || res.Status != StatusInterrupted {
		t.Errorf("the run ended with %+v", res)
	}
}

func TestOptions(t *testing.T) {
	_, err := NewSession(WithTimeout(0))
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrInvalid || !strings.Contains(err.Error(), "WithTimeout") {
		t.Errorf("WithTimeout(0): %v", err)
	}
	if _, err := NewSession(WithTaskLimit(15)); !errors.Is(err, ErrInvalid) {
		t.Errorf("WithTaskLimit(15): %v", err)
	}
	if _, err := NewSession(WithDiskQuota(1024)); !errors.Is(err, ErrInvalid) {
		t.Errorf("WithDiskQuota(1024): %v", err)
	}
	if _, err := NewSession(WithInodeQuota(63)); !errors.Is(err, ErrInvalid) {
		t.Errorf("WithInodeQuota(63): %v", err)
	}
	if _, err := NewSession(WithWorkspaceRoot("relative")); !errors.Is(err, ErrInvalid) {
		t.Errorf("WithWorkspaceRoot(relative): %v", err)
	}
	_, err = NewSession(WithWorkspaceRoot("/nonexistent-codeinterp-root"))
	if err == nil || errors.Is(err, ErrInvalid) || !errors.As(err, &e) || e.Detail == "" {
		t.Errorf("missing workspace root: %v", err)
	}
	if _, err := shared.RunWithOptions("1", RunOptions{Timeout: -time.Second}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative timeout: %v", err)
	}
	s, err := NewSession(WithTimeout(5*time.Second), WithFigureDPI(50), WithOutputLimit(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res := run(t, s, "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nprint('y' * 10000)")
	// A head and a tail of 2048 bytes, and the marker line between them.
	if res.Truncated&TruncatedStdout == 0 || !strings.HasPrefix(res.Stdout, strings.Repeat("y", 2048)+"\n[... ") ||
		!strings.Contains(res.Stdout, "passed the output limit of 4 KiB") ||
		!strings.HasSuffix(res.Stdout, "...]\n"+strings.Repeat("y", 2047)+"\n") {
		t.Errorf("truncated %v, %d bytes of stdout: %.100q", res.Truncated, len(res.Stdout), res.Stdout)
	}
	png := res.OutputsOf("image/png")
	if len(png) != 1 || len(png[0].Data) < 24 {
		t.Fatalf("outputs %d", len(png))
	}
	// The IHDR width of a 6.4 inch figure at 50 dpi, cropped to what is
	// drawn as IPython's inline backend does; its text gives the full size.
	d := png[0].Data
	if w := int(d[16])<<24 | int(d[17])<<16 | int(d[18])<<8 | int(d[19]); w < 200 || w > 340 {
		t.Errorf("figure width %d px, want about 320", w)
	}
	if text := res.OutputsOf("text/plain"); len(text) != 1 ||
		string(text[0].Data) != "<Figure size 320x240 with 1 Axes>" {
		t.Errorf("figure text %v", text)
	}
}

// A stream past the output limit is whole in its spill file.
func TestSpillFile(t *testing.T) {
	s, err := NewSession(WithOutputLimit(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spilled := func(res *Result, stream Stream, want string) {
		t.Helper()
		name := fmt.Sprintf(".outputs/cell-%d.%v", res.ExecutionCount, stream)
		if got := res.SpillFile(stream); got != name {
			t.Fatalf("SpillFile(%v) = %q, want %q", stream, got, name)
		}
		data, err := s.GetFile(name)
		if err != nil || string(data) != want {
			t.Errorf("GetFile(%s): %d bytes, %v; want %d bytes", name, len(data), err, len(want))
		}
	}
	res := run(t, s, "print('y' * 10000)")
	spilled(res, Stdout, strings.Repeat("y", 10000)+"\n")
	marker := strings.Split(res.Stdout, "\n")[1]
	if !strings.HasSuffix(marker, "the whole output is in "+res.SpillFile(Stdout)+" ...]") {
		t.Errorf("marker %q", marker)
	}
	if f := res.SpillFile(Stderr); f != "" { // stderr was not cut
		t.Errorf("SpillFile(Stderr) = %q", f)
	}
	if f := res.SpillFile(Stream(3)); f != "" {
		t.Errorf("SpillFile(3) = %q", f)
	}
	// Raw bytes, NULs and invalid UTF-8 included, byte for byte.
	var raw []byte
	for i := 0; i < 40; i++ {
		for b := 0; b < 256; b++ {
			raw = append(raw, byte(b))
		}
	}
	res = run(t, s, "import sys\nsys.stdout.buffer.write(bytes(range(256)) * 40)\nprint('err', file=sys.stderr)")
	if res.Truncated != TruncatedStdout || res.Stderr != "err\n" || res.SpillFile(Stderr) != "" {
		t.Errorf("truncated %v, stderr %q, stderr spill %q", res.Truncated, res.Stderr, res.SpillFile(Stderr))
	}
	spilled(res, Stdout, string(raw))
	res = run(t, s, "import sys\nprint('z' * 10000, file=sys.stderr)\nprint('short')")
	if res.Truncated != TruncatedStderr || res.SpillFile(Stdout) != "" {
		t.Errorf("truncated %v, stdout spill %q", res.Truncated, res.SpillFile(Stdout))
	}
	spilled(res, Stderr, strings.Repeat("z", 10000)+"\n")
	res = run(t, s, "print('short')")
	if res.Truncated != 0 || res.SpillFile(Stdout) != "" || res.SpillFile(Stderr) != "" {
		t.Errorf("an uncut run: truncated %v, spill files %q %q", res.Truncated,
			res.SpillFile(Stdout), res.SpillFile(Stderr))
	}
}

func TestSpillLimit(t *testing.T) {
	s, err := NewSession(WithOutputLimit(4096), WithSpillLimit(0))
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s, "print('y' * 10000)")
	want := "[... 5905 bytes (0 lines) left out: stdout passed the output limit of 4 KiB; the rest was not kept ...]"
	if marker := strings.Split(res.Stdout, "\n")[1]; marker != want || res.Truncated != TruncatedStdout {
		t.Errorf("truncated %v, marker %q", res.Truncated, marker)
	}
	if f := res.SpillFile(Stdout); f != "" {
		t.Errorf("WithSpillLimit(0): SpillFile(Stdout) = %q", f)
	}
	if _, err := s.GetFile(".outputs/cell-1.stdout"); !errors.Is(err, ErrNotFound) {
		t.Errorf("WithSpillLimit(0): GetFile of the spill file: %v", err)
	}
	s.Close()
	// A spill file of 2 KiB keeps the stream's first 2 KiB.
	s, err = NewSession(WithOutputLimit(4096), WithSpillLimit(2048))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res = run(t, s, "print('y' * 10000)")
	if f := res.SpillFile(Stdout); f != ".outputs/cell-1.stdout" ||
		!strings.HasSuffix(strings.Split(res.Stdout, "\n")[1], "its first 2 KiB are in .outputs/cell-1.stdout ...]") {
		t.Errorf("WithSpillLimit(2048): SpillFile %q, stdout %.200q", f, res.Stdout)
	}
	if data, err := s.GetFile(".outputs/cell-1.stdout"); err != nil || string(data) != strings.Repeat("y", 2048) {
		t.Errorf("WithSpillLimit(2048): %d bytes, %v", len(data), err)
	}
	for _, bad := range []uint64{5, 1023, 4<<30 + 1} {
		if _, err := NewSession(WithSpillLimit(bad)); !errors.Is(err, ErrInvalid) ||
			!strings.Contains(err.Error(), fmt.Sprintf("WithSpillLimit(%d) refused", bad)) {
			t.Errorf("WithSpillLimit(%d): %v", bad, err)
		}
	}
}

// imported tells which of these modules a fresh session has imported.
const imported = "import sys\n[m in sys.modules for m in " +
	"('wave', 'sched', 'email.mime.text', 'pandas', 'matplotlib.pyplot')]"

func TestPreload(t *testing.T) {
	value := func(opts ...Option) string {
		t.Helper()
		s, err := NewSession(append([]Option{WithTimeout(20 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		v := run(t, s, imported).Value
		if r := run(t, s, "import pandas\n2 * 21"); r.Value != "42" {
			t.Errorf("import pandas: %+v", r)
		}
		return v
	}
	// The default list: pandas and matplotlib, none of the other three.
	if v := value(); v != "[False, False, False, True, True]" {
		t.Errorf("default preload: %s", v)
	}
	// A list of its own, with a zygote of its own: its modules, dotted
	// names included, and matplotlib.pyplot always; pandas no longer.
	const list = "wave,sched,email.mime.text"
	for i := 0; i < 2; i++ {
		if v := value(WithPreload(list)); v != "[True, True, True, False, True]" {
			t.Errorf("WithPreload(%q), session %d: %s", list, i, v)
		}
	}
	if v := value(WithPreload(list), WithZygote(false)); v != "[True, True, True, False, True]" {
		t.Errorf("WithPreload(%q), WithZygote(false): %s", list, v)
	}

	for _, bad := range []string{"numpy, pandas", "", "numpy,,pandas", "numpy,",
		"numpy..linalg", "9lives", "nump\u00fc", "numpy;import os", "numpy\x00",
		strings.Repeat("m,", 599) + "m"} {
		s, err := NewSession(WithPreload(bad))
		if s != nil {
			s.Close()
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrInvalid || !strings.Contains(err.Error(), "WithPreload") {
			t.Errorf("WithPreload(%.20q): %v", bad, err)
		}
	}
	// Well formed, but nothing by that name: the worker does not start.
	s, err := NewSession(WithPreload("numpy,codeinterp_no_such_module"))
	if s != nil {
		s.Close()
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrSpawn || !strings.Contains(e.Detail, "codeinterp_no_such_module") {
		t.Errorf("a module that does not exist: %v", err)
	}
}

func TestZygote(t *testing.T) {
	const hash = "hash('codeinterp')"
	start := func(opts ...Option) *Session {
		t.Helper()
		s, err := NewSession(append([]Option{WithTimeout(20 * time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Forked from one zygote (the default list's), sessions share its hash
	// seed, restarted ones too. $CODEINTERP_WORKER turns the zygote off.
	_, noZygote := os.LookupEnv("CODEINTERP_WORKER")
	c := start(WithZygote(true))
	defer c.Close()
	hc := run(t, c, hash).Value
	if !noZygote {
		if h := run(t, shared, hash).Value; h != hc {
			t.Errorf("two sessions of one zygote: hash %s and %s", hc, h)
		}
		if err := c.Restart(); err != nil {
			t.Fatal(err)
		}
		if h := run(t, c, hash).Value; h != hc {
			t.Errorf("restarted from the zygote: hash %s, was %s", h, hc)
		}
	}

	a := start(WithZygote(false))
	defer a.Close()
	b := start(WithZygote(false))
	defer b.Close()
	if r := run(t, a, "1+1"); r.Status != StatusOK || r.Value != "2" {
		t.Errorf("1+1 without the zygote: %+v", r)
	}
	// The default preload list, as from the zygote.
	if v := run(t, a, "import sys\n'pandas' in sys.modules").Value; v != "True" {
		t.Errorf("pandas without the zygote: %s", v)
	}
	// Each worker started by exec draws a hash seed of its own, restarted
	// ones too.
	ha, hb := run(t, a, hash).Value, run(t, b, hash).Value
	if ha == hb || ha == hc || hb == hc {
		t.Errorf("hashes: exec %s and %s, zygote %s", ha, hb, hc)
	}
	old := a.PID()
	if err := a.Restart(); err != nil {
		t.Fatal(err)
	}
	if a.PID() == old || a.PID() <= 0 {
		t.Errorf("pid %d after restart, was %d", a.PID(), old)
	}
	if h := run(t, a, hash).Value; h == ha || h == hc {
		t.Errorf("restarted by exec: hash %s (was %s, zygote %s)", h, ha, hc)
	}
}

// A PID namespace of the worker's own is best effort, for workers forked
// from the zygote only: where the bit is set the cell's process is pid 1,
// whose parent is outside its namespace. A worker started by exec never
// has one, so a session that requires it fails with ErrSandbox.
func TestPIDNamespace(t *testing.T) {
	const ids = "import os\n(os.getpid(), os.getppid())"
	has := shared.Sandbox()&SandboxPIDNS != 0
	if v := run(t, shared, ids).Value; (v == "(1, 0)") != has {
		t.Errorf("default config: sandbox %v, (getpid, getppid) %s", shared.Sandbox(), v)
	}
	if _, noZygote := os.LookupEnv("CODEINTERP_WORKER"); noZygote && has {
		t.Errorf("$CODEINTERP_WORKER set (no zygote), yet %v", shared.Sandbox())
	}

	s, err := NewSession(WithTimeout(20*time.Second), WithZygote(false))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Sandbox()&SandboxPIDNS != 0 {
		t.Errorf("started by exec, yet %v", s.Sandbox())
	}
	if v := run(t, s, "import os\nos.getpid()").Value; v == "1" {
		t.Errorf("started by exec, yet pid 1 in its cell")
	}

	need := SandboxSeccomp | SandboxRlimits | SandboxNoNewPrivs | SandboxPIDNS
	s2, err := NewSession(WithZygote(false), WithRequiredSandbox(need))
	if s2 != nil {
		s2.Close()
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrSandbox || !errors.Is(err, ErrSandbox) || e.Detail == "" {
		t.Errorf("WithZygote(false), WithRequiredSandbox(%v): %v", need, err)
	}
}

// A manifest that cannot be read fails the start with ErrManifest, its
// path in the Detail; malformed arguments fail with ErrInvalid.
func TestManifest(t *testing.T) {
	dir := t.TempDir()
	key := make([]byte, ManifestKeySize)
	for i := range key {
		key[i] = byte(i)
	}
	// A well-formed public key file (the NAME.pub of "codeinterp-manifest
	// keygen NAME"), so that what fails is the manifest, which is missing.
	keyFile := dir + "/test.pub"
	line := "codeinterp-manifest-public-key " + base64.StdEncoding.EncodeToString(key) + "\n"
	if err := os.WriteFile(keyFile, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := dir + "/no-such-manifest.json"
	for _, o := range []Option{WithManifest(missing, keyFile), WithManifestKey(missing, key)} {
		s, err := NewSession(WithTimeout(20*time.Second), o)
		if s != nil {
			s.Close()
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrManifest || !errors.Is(err, ErrManifest) ||
			!strings.Contains(e.Detail, missing) || !strings.Contains(err.Error(), missing) {
			t.Errorf("%s, missing manifest: %v", o.name, err)
		}
	}
	if ErrManifest != -12 || !strings.Contains(ErrManifest.Error(), "manifest") {
		t.Errorf("ErrManifest = %d, %q", int(ErrManifest), ErrManifest.Error())
	}

	long := "/" + strings.Repeat("m", 4096)
	for _, o := range []Option{
		WithManifest("", keyFile), WithManifest(missing, ""), WithManifest(long, keyFile),
		WithManifest(missing+"\x00", keyFile), WithManifest(missing, keyFile+"\x00"),
		WithManifestKey(missing, key[:31]), WithManifestKey(missing, append(key, 0)),
		WithManifestKey(missing, nil), WithManifestKey("", key), WithManifestKey(long, key),
		WithManifestKey(missing+"\x00", key),
	} {
		s, err := NewSession(o)
		if s != nil {
			s.Close()
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrInvalid || !strings.Contains(err.Error(), o.name) {
			t.Errorf("%s: %v", o.name, err)
		}
	}
}

// A wheelhouse without a manifest fails the start with ErrManifest, the
// directory in the Detail; an empty one is no wheelhouse.
func TestWheelhouse(t *testing.T) {
	// A real directory, so that what fails is the missing manifest.
	dir := t.TempDir()
	s, err := NewSession(WithTimeout(20*time.Second), WithWheelhouse(dir))
	if s != nil {
		s.Close()
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrManifest || !errors.Is(err, ErrManifest) ||
		!strings.Contains(e.Detail, dir) || !strings.Contains(e.Detail, "manifest") {
		t.Errorf("WithWheelhouse(%q) without a manifest: %v", dir, err)
	}

	// An empty path turns an earlier one off: the session starts without
	// a manifest.
	s, err = NewSession(WithTimeout(20*time.Second), WithWheelhouse(dir), WithWheelhouse(""))
	if err != nil {
		t.Fatalf("WithWheelhouse(%q), WithWheelhouse(\"\"): %v", dir, err)
	}
	defer s.Close()
	if r, err := s.Run("6 * 7"); err != nil || r.Value != "42" {
		t.Errorf("run: %v %v", r, err)
	}

	for _, o := range []Option{WithWheelhouse("/" + strings.Repeat("w", 4096)),
		WithWheelhouse(dir + "\x00")} {
		s, err := NewSession(o)
		if s != nil {
			s.Close()
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != ErrInvalid || !strings.Contains(err.Error(), o.name) {
			t.Errorf("%s: %v", o.name, err)
		}
	}
}

// Status prints ci_status_name's word for every status the library has.
func TestStatusNames(t *testing.T) {
	for _, c := range []struct {
		s    Status
		want string
	}{
		{StatusOK, "ok"}, {StatusError, "error"}, {StatusTimeout, "timeout"},
		{StatusMemory, "memory"}, {StatusKilled, "killed"}, {StatusInterrupted, "interrupted"},
		{Status(6), "unknown(6)"}, {Status(-1), "unknown(-1)"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("Status(%d).String() = %q, want %q", int(c.s), got, c.want)
		}
		if got := fmt.Sprintf("%v", c.s); got != c.want {
			t.Errorf("%%v of Status(%d) = %q, want %q", int(c.s), got, c.want)
		}
	}
}

// Sandbox layers print by the names of their CI_SANDBOX_* bits.
func TestSandboxNames(t *testing.T) {
	for _, c := range []struct {
		m    Sandbox
		want string
	}{
		{allLayers, "seccomp|rlimits|no_new_privs|landlock|unprivileged|userns|netns|ipcns|utsns|mntns|pidns|task_limit|disk_quota"},
		{SandboxSeccomp | SandboxUserNS, "seccomp|userns"},
		{0, "none"},
		{SandboxPIDNS | 0x2000, "pidns|0x2000"},
	} {
		if got := fmt.Sprintf("%v", c.m); got != c.want {
			t.Errorf("Sandbox(%#x) prints %q, want %q", uint(c.m), got, c.want)
		}
	}
	if got := shared.Sandbox().String(); !strings.HasPrefix(got, "seccomp|rlimits|no_new_privs") {
		t.Errorf("the shared session's layers print as %q", got)
	}
}

// A cell that ignores the timeout's KeyboardInterrupt is killed after the
// grace period, and its error is named TimeoutError as a cell that stops
// at its timeout is; the dead session's refusal then names Go's methods.
func TestCellKilledAfterTimeoutIsTimeoutError(t *testing.T) {
	s, err := NewSession(WithTimeout(300*time.Millisecond), WithGrace(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	res := run(t, s, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"+
		"import time\ntime.sleep(30)")
	if res.Status != StatusKilled || res.Error == nil || res.Error.Name != "TimeoutError" {
		t.Fatalf("status %v, error %+v", res.Status, res.Error)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("killed after %v", el)
	}
	_, err = s.Run("1")
	if !errors.Is(err, ErrDead) || !strings.Contains(err.Error(), "Session.Restart") ||
		strings.Contains(err.Error(), "ci_") {
		t.Errorf("Run on the dead session: %v", err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if r := run(t, s, "6 * 7"); r.Value != "42" {
		t.Errorf("after Restart: %+v", r)
	}
}

// A refused argument's error names the Go method and the argument, and
// why, never the C function.
func TestRefusedArgumentsNameTheGoMethod(t *testing.T) {
	rule := `: a name is a path relative to the workspace, without empty, "." or ".." components`
	_, getErr := shared.GetFile("../x")
	_, runErr := shared.RunWithOptions("1", RunOptions{Timeout: 25 * time.Hour})
	_, bigErr := shared.Run(strings.Repeat("#", 16<<20+1))
	_, dpiErr := NewSession(WithFigureDPI(5))
	_, spillErr := NewSession(WithSpillLimit(5))
	_, zeroErr := NewSession(Option{})
	for _, c := range []struct {
		err  error
		code Code
		want string
	}{
		{getErr, ErrInvalid, `codeinterp: GetFile: invalid argument: name "../x" has a ".." component` + rule},
		{shared.PutFile("/etc/passwd", nil), ErrInvalid,
			`codeinterp: PutFile: invalid argument: name "/etc/passwd" is absolute` + rule},
		{shared.PutFile("", nil), ErrInvalid, `codeinterp: PutFile: invalid argument: name "" is empty` + rule},
		{shared.PutFile("a//b", nil), ErrInvalid,
			`codeinterp: PutFile: invalid argument: name "a//b" has an empty component ("//" or a trailing "/")` + rule},
		{shared.PutFile("a/./b", nil), ErrInvalid,
			`codeinterp: PutFile: invalid argument: name "a/./b" has a "." component` + rule},
		{runErr, ErrInvalid, "codeinterp: Run: invalid argument: RunOptions.Timeout 25h0m0s refused: " +
			"must be 1 ms to 24 h, or 0 for the session's"},
		{bigErr, ErrTooBig, "codeinterp: Run: size over the limit: code of 16777217 bytes is over the " +
			"limit of a cell, 16 MiB (16777216 bytes)"},
		{dpiErr, ErrInvalid, "codeinterp: NewSession: invalid argument: WithFigureDPI(5) refused: must be 10 to 600"},
		{spillErr, ErrInvalid, "codeinterp: NewSession: invalid argument: WithSpillLimit(5) refused: " +
			"must be 0 (no spill files), or 1024 bytes to 4 GiB (4294967296 bytes)"},
		{zeroErr, ErrInvalid, "codeinterp: NewSession: invalid argument: a zero Option{}: " +
			"make options with the With* functions"},
	} {
		if c.err == nil || c.err.Error() != c.want || !errors.Is(c.err, c.code) {
			t.Errorf("got  %v\nwant %s", c.err, c.want)
		}
	}
	if msg := ErrDead.Error(); msg != "the session's worker is dead; call Session.Restart" {
		t.Errorf("ErrDead.Error() = %q", msg)
	}
	// The library's own detail, its C names given as Go's.
	if got := goNames("ci_run: the worker is dead; call ci_session_restart or ci_run_ex"); got !=
		"the worker is dead; call Session.Restart or Session.RunWithOptions" {
		t.Errorf("goNames: %q", got)
	}
}
