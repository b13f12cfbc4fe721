package codeinterp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newTestSession is a session of its own with a 20 s cell timeout, closed
// when the test ends.
func newTestSession(t *testing.T, opts ...Option) *Session {
	t.Helper()
	s, err := NewSession(append([]Option{WithTimeout(20 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// restored is RestoreSession(data, opts...) with a 20 s cell timeout,
// closed when the test ends.
func restored(t *testing.T, data []byte, opts ...Option) *Session {
	t.Helper()
	s, err := RestoreSession(data, append([]Option{WithTimeout(20 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatalf("RestoreSession: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func snapshotOf(t *testing.T, s *Session) []byte {
	t.Helper()
	data, err := s.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if magic := []byte("\x89CISNAP\n"); !bytes.HasPrefix(data, magic) {
		t.Fatalf("Snapshot: %d bytes without the magic number %q", len(data), magic)
	}
	return data
}

// expectValue runs code on s and fails unless its value is want.
func expectValue(t *testing.T, s *Session, code, want string) *Result {
	t.Helper()
	res := run(t, s, code)
	if res.Status != StatusOK || res.Value != want {
		t.Errorf("%q: status %v value %q, want %q (error %+v)", code, res.Status, res.Value, want, res.Error)
	}
	return res
}

// expectError fails unless err is an *Error of op and code whose Error()
// is want.
func expectError(t *testing.T, err error, op string, code Code, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Op != op || !errors.Is(err, code) || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// The cell of test/cells/snapshot_state.py, which test_snapshot.c runs
// too: a lambda, a class and a function defined in a cell, shared
// references, a DataFrame, the generators' states and files in
// subdirectories, one executable.
func snapshotStateCell(t *testing.T) string {
	t.Helper()
	cell, err := os.ReadFile(filepath.Join("..", "..", "test", "cells", "snapshot_state.py"))
	if err != nil {
		t.Fatal(err)
	}
	return string(cell)
}

func TestSnapshotCarriesStateFilesAndCount(t *testing.T) {
	s := newTestSession(t)
	run(t, s, snapshotStateCell(t))
	if err := s.PutFile("put.txt", []byte("put by the host")); err != nil {
		t.Fatal(err)
	}
	doubled := expectValue(t, s, "count * 2", "82")
	last := run(t, s, "None")
	data := snapshotOf(t, s)
	// The cell's `with open(...) as f` leaves a closed file in f.
	if left, err := SnapshotLeftOut(data); err != nil || !reflect.DeepEqual(left, []string{"f: a closed file"}) {
		t.Errorf("SnapshotLeftOut = %q, %v", left, err)
	}

	r := restored(t, data)
	res := expectValue(t, r, "add_one(count), scaled(2), p.norm2(), type(p).__name__, pair[0] is pair[1]",
		"(42, 82, 25, 'Point', True)")
	if res.ExecutionCount != last.ExecutionCount+1 {
		t.Errorf("restored session's first cell is number %d, want %d", res.ExecutionCount, last.ExecutionCount+1)
	}
	expectValue(t, r, fmt.Sprintf("Out[%d], In[%d]", doubled.ExecutionCount, doubled.ExecutionCount),
		"(82, 'count * 2')")
	// The frame, and the generators drawing on from the same state.
	for _, expr := range []string{"int(pd.util.hash_pandas_object(frame).sum()), frame.shape",
		"random.random(), float(np.random.rand())"} {
		if a, b := run(t, s, expr).Value, run(t, r, expr).Value; a != b || a == "" {
			t.Errorf("%s: %q in the source, %q restored", expr, a, b)
		}
	}
	for name, want := range map[string][]byte{
		"notes.txt":         []byte("hello"),
		"put.txt":           []byte("put by the host"),
		"sub/deep/data.bin": bytesRange(256),
	} {
		got, err := r.GetFile(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("restored GetFile(%q) = %q, %v", name, got, err)
		}
	}
	expectValue(t, r, "oct(os.stat('run.sh').st_mode & 0o777), oct(os.stat('notes.txt').st_mode & 0o777)",
		"('0o700', '0o600')")
	if r.Workspace() == s.Workspace() || r.PID() == s.PID() || r.Sandbox() != s.Sandbox() {
		t.Errorf("restored workspace %s pid %d sandbox %v; source %s %d %v",
			r.Workspace(), r.PID(), r.Sandbox(), s.Workspace(), s.PID(), s.Sandbox())
	}
	// A restored function's globals are the new session's, and each
	// session goes its own way.
	expectValue(t, r, "count = 10\nscaled(2)", "20")
	if err := r.PutFile("notes.txt", []byte("restored only")); err != nil {
		t.Fatal(err)
	}
	expectValue(t, r, "shared.append(3); shared", "[1, 2, 3]")
	expectValue(t, s, "scaled(2), open('notes.txt').read(), shared", "(82, 'hello', [1, 2])")
}

func bytesRange(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestSnapshotLeftOutNamesAGenerator(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "gen = (i for i in range(3))\nnext(gen)\nkept = 'still here'")
	data := snapshotOf(t, s)
	left, err := SnapshotLeftOut(data)
	if want := []string{"gen: a generator in flight"}; err != nil || !reflect.DeepEqual(left, want) {
		t.Errorf("SnapshotLeftOut = %q, %v; want %q", left, err, want)
	}
	r := restored(t, data)
	expectValue(t, r, "kept, 'gen' in globals()", "('still here', False)")
	// The source keeps its generator.
	expectValue(t, s, "next(gen)", "1")
}

func TestRestoreRefusesACutSnapshot(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "cut_me = list(range(100))\nopen('cut.txt', 'w').write('x' * 1000)")
	data := snapshotOf(t, s)
	const refused = "the snapshot is refused: a snapshot whose SHA-256 does not match (cut, changed or damaged)"
	half := data[:len(data)/2]
	r, err := RestoreSession(half)
	if r != nil {
		t.Errorf("RestoreSession of half a snapshot gave a session")
	}
	expectError(t, err, "RestoreSession", ErrInvalid, "codeinterp: RestoreSession: invalid argument: "+refused)
	_, err = SnapshotLeftOut(half)
	expectError(t, err, "SnapshotLeftOut", ErrInvalid, "codeinterp: SnapshotLeftOut: invalid argument: "+refused)

	flipped := append([]byte(nil), data...)
	flipped[len(flipped)/2] ^= 0x10
	_, err = RestoreSession(flipped)
	expectError(t, err, "RestoreSession", ErrInvalid, "codeinterp: RestoreSession: invalid argument: "+refused)
	const noMagic = "the snapshot is refused: not a snapshot (no magic number)"
	for _, b := range [][]byte{nil, {}, []byte("not a snapshot at all, but long enough to hold the header and a hash")} {
		_, err = RestoreSession(b)
		expectError(t, err, "RestoreSession", ErrInvalid, "codeinterp: RestoreSession: invalid argument: "+noMagic)
		_, err = SnapshotLeftOut(b)
		expectError(t, err, "SnapshotLeftOut", ErrInvalid, "codeinterp: SnapshotLeftOut: invalid argument: "+noMagic)
	}
	// The whole snapshot, which the failed calls did not change, restores.
	expectValue(t, restored(t, data), "len(cut_me), open('cut.txt').read(3)", "(100, 'xxx')")
}

func TestRestoreTakesNewSessionsOptions(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "big = 'x' * 1000\nopen('big.txt', 'w').write(big)")
	data := snapshotOf(t, s)
	_, err := RestoreSession(data, WithFigureDPI(5))
	expectError(t, err, "RestoreSession", ErrInvalid,
		"codeinterp: RestoreSession: invalid argument: WithFigureDPI(5) refused: must be 10 to 600")
	_, err = RestoreSession(data, Option{})
	expectError(t, err, "RestoreSession", ErrInvalid,
		"codeinterp: RestoreSession: invalid argument: a zero Option{}: make options with the With* functions")
	_, err = RestoreSession(data, WithFileLimit(100))
	expectError(t, err, "RestoreSession", ErrTooBig,
		"codeinterp: RestoreSession: size over the limit: a file of the snapshot (1000 bytes) is over the file limit of 100")

	calls := 0
	r := restored(t, data, WithFunction("double", "", func(args []any, _ map[string]any) (any, error) {
		calls++
		return fmt.Sprint(args[0], args[0]), nil
	}))
	expectValue(t, r, "double('ab'), len(big)", "('abab', 1000)")
	if calls != 1 {
		t.Errorf("the host function ran %d times", calls)
	}
}

func TestRestoreFromManyGoroutines(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "branch = 'start'")
	data := snapshotOf(t, s)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i == 3 { // a cut one alongside: its detail is its own
				_, err := RestoreSession(data[:len(data)-1])
				if !errors.Is(err, ErrInvalid) || !bytes.Contains([]byte(err.Error()), []byte("SHA-256")) {
					errs[i] = fmt.Errorf("cut: %v", err)
				}
				return
			}
			r, err := RestoreSession(data, WithTimeout(20*time.Second))
			if err != nil {
				errs[i] = err
				return
			}
			defer r.Close()
			res, err := r.Run(fmt.Sprintf("was, branch = branch, 'b%d'\nwas, branch", i))
			if want := fmt.Sprintf("('start', 'b%d')", i); err != nil || res.Value != want {
				errs[i] = fmt.Errorf("restore %d: %v %+v, want %s", i, err, res, want)
			}
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	expectValue(t, s, "branch", "'start'")
}

// busy starts a cell of a second on s and returns once it runs, with the
// channel that gets its Run's error.
func busy(s *Session) <-chan error {
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		var once sync.Once
		_, err := s.RunWithOptions("import time\nprint('go', flush=True)\ntime.sleep(1)", RunOptions{
			OnOutput: func(Stream, []byte) { once.Do(func() { close(started) }) },
		})
		done <- err
	}()
	<-started
	return done
}

func TestSnapshotBusyDeadAndClosed(t *testing.T) {
	s := newTestSession(t)
	done := busy(s)
	_, err := s.Snapshot()
	expectError(t, err, "Snapshot", ErrBusy,
		"codeinterp: Snapshot: "+ErrBusy.Error()+": another call on this session is in progress")
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	run(t, s, "import os\nos._exit(3)")
	data, err := s.Snapshot()
	if data != nil || !errors.Is(err, ErrDead) {
		t.Errorf("Snapshot of a dead session: %d bytes, %v", len(data), err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	run(t, s, "after = 'restart'")
	expectValue(t, restored(t, snapshotOf(t, s)), "after", "'restart'")

	s.Close()
	if _, err := s.Snapshot(); !errors.Is(err, ErrClosed) {
		t.Errorf("Snapshot after Close: %v", err)
	}
}

func TestInterruptStopsASnapshot(t *testing.T) {
	s := newTestSession(t)
	run(t, s, "import time\nclass Slow:\n    def __reduce__(self):\n        time.sleep(30)\nslow = Slow()")
	interrupted := make(chan bool)
	go func() {
		deadline := time.Now().Add(15 * time.Second)
		for !s.Interrupt() {
			if time.Now().After(deadline) {
				interrupted <- false
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		interrupted <- true
	}()
	start := time.Now()
	data, err := s.Snapshot()
	if !<-interrupted {
		t.Fatal("Interrupt never found the snapshot running")
	}
	var e *Error
	if data != nil || !errors.As(err, &e) || e.Code != ErrIO ||
		e.Detail != "taking the interpreter state was interrupted" {
		t.Errorf("an interrupted Snapshot: %d bytes, %v", len(data), err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("the interrupted Snapshot took %v", time.Since(start))
	}
	// Interrupted like a cell: the session lives on, state and all.
	expectValue(t, s, "del slow\n6 * 7", "42")
}

// recovered is the value f panics with, nil if it returns.
func recovered(f func()) (p interface{}) {
	defer func() { p = recover() }()
	f()
	return nil
}

func TestNoHostFunctionRunsWhileASnapshotIsTakenOrLoaded(t *testing.T) {
	calls := 0
	boom := WithFunction("boom", "", func([]any, map[string]any) (any, error) {
		calls++
		panic("boom")
	})
	s := newTestSession(t, boom)
	// obj calls boom as it is pickled; f holds boom itself.
	run(t, s, "class Pickled:\n    def __reduce__(self):\n        return (str, (boom(),))\n"+
		"obj = Pickled()\nf = boom\nkept = 'here'")
	data := snapshotOf(t, s)
	const refused = "RuntimeError: a host function can only be called while a cell runs"
	if left, err := SnapshotLeftOut(data); err != nil || !reflect.DeepEqual(left, []string{"obj: " + refused}) {
		t.Errorf("SnapshotLeftOut = %q, %v", left, err)
	}
	// f is carried by its name: it loads where a function of that name is.
	expectValue(t, restored(t, data, boom), "kept, f is boom, 'obj' in globals()", "('here', True, False)")
	_, err := RestoreSession(data)
	expectError(t, err, "RestoreSession", ErrInvalid, "codeinterp: RestoreSession: invalid argument: "+
		"a variable could not be loaded (the variable after 'Pickled'): ModuleNotFoundError: No module "+
		"named 'codeinterp_host'; it holds a host function this session does not have: give it "+
		"the functions of the session the snapshot was taken in")

	// A state that calls one as it loads does not load, nor fork.
	run(t, s, "class Later:\n    def __reduce__(self):\n        return (boom, ())\nlater = Later()")
	const unloaded = "a variable could not be loaded (the variable after 'kept'): " + refused
	_, err = RestoreSession(snapshotOf(t, s), boom)
	expectError(t, err, "RestoreSession", ErrInvalid, "codeinterp: RestoreSession: invalid argument: "+unloaded)
	b, err := s.Fork()
	if b != nil {
		t.Errorf("Fork of a state that does not load gave a session")
	}
	expectError(t, err, "Fork", ErrInvalid, "codeinterp: Fork: invalid argument: "+unloaded)
	if calls != 0 {
		t.Errorf("boom ran %d times in the host", calls)
	}
	// A cell's own call runs it.
	if p := recovered(func() { s.Run("boom()") }); p != "boom" || calls != 1 {
		t.Errorf("a cell's boom(): panic %v, %d calls", p, calls)
	}
}

// forked is s.Fork(), closed when the test ends.
func forked(t *testing.T, s *Session) *Session {
	t.Helper()
	b, err := s.Fork()
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestAForkIsACopyThatOutlivesItsParent(t *testing.T) {
	var pings atomic.Int64
	ping := WithFunction("ping", "", func(args []any, _ map[string]any) (any, error) {
		pings.Add(1)
		return fmt.Sprint("pong ", args[0]), nil
	})
	boom := WithFunction("boom", "", func([]any, map[string]any) (any, error) { panic("boom") })
	p := newTestSession(t, ping, boom, WithFileLimit(1000))
	last := run(t, p, "import os\nx = 'parent'\nf = ping\nopen('notes.txt', 'w').write('from the parent')")
	if left := p.LeftOut(); left != nil {
		t.Errorf("LeftOut of a new session = %q", left)
	}

	b := forked(t, p)
	// f holds a host function: the branch has it, the parent's options.
	res := expectValue(t, b, "x, open('notes.txt').read(), f('b')", "('parent', 'from the parent', 'pong b')")
	if res.ExecutionCount != last.ExecutionCount+1 {
		t.Errorf("the branch's first cell is number %d, want %d", res.ExecutionCount, last.ExecutionCount+1)
	}
	if left := b.LeftOut(); left != nil {
		t.Errorf("LeftOut of a branch that lacks nothing = %q", left)
	}
	if b.Workspace() == p.Workspace() || b.PID() == p.PID() || b.Sandbox() != p.Sandbox() {
		t.Errorf("branch workspace %s pid %d sandbox %v; parent %s %d %v",
			b.Workspace(), b.PID(), b.Sandbox(), p.Workspace(), p.PID(), p.Sandbox())
	}
	// Each goes its own way, in state and in files.
	run(t, b, "x = 'branch'\nonly_branch = 1")
	if err := b.PutFile("notes.txt", []byte("from the branch")); err != nil {
		t.Fatal(err)
	}
	run(t, p, "only_parent = 2\nopen('parent.txt', 'w').write('p')")
	expectValue(t, p, "x, open('notes.txt').read(), 'only_branch' in globals()", "('parent', 'from the parent', False)")
	expectValue(t, b, "x, open('notes.txt').read(), 'only_parent' in globals(), os.path.exists('parent.txt')",
		"('branch', 'from the branch', False, False)")
	// The branch has the parent's options: its file limit.
	if err := b.PutFile("big.bin", make([]byte, 1001)); !errors.Is(err, ErrTooBig) {
		t.Errorf("PutFile over the parent's file limit in the branch: %v", err)
	}

	// The parent closed, the branch runs on, its host functions too.
	p.Close()
	expectValue(t, b, "x, ping('after')", "('branch', 'pong after')")
	if n := pings.Load(); n != 2 {
		t.Errorf("ping ran %d times, want 2", n)
	}
	if p := recovered(func() { b.Run("boom()") }); p != "boom" {
		t.Errorf("the branch's Run panicked with %v, want boom", p)
	}
	// A branch of the branch, the same options again.
	c := forked(t, b)
	b.Close()
	expectValue(t, c, "x, ping('c')", "('branch', 'pong c')")
}

func TestAForkLeavesOutAGeneratorAndLeftOutNamesIt(t *testing.T) {
	p := newTestSession(t)
	run(t, p, "gen = (i for i in range(3))\nnext(gen)\nkept = 'still here'")
	b := forked(t, p)
	want := []string{"gen: a generator in flight"}
	if left := b.LeftOut(); !reflect.DeepEqual(left, want) {
		t.Errorf("LeftOut of the branch = %q, want %q", left, want)
	}
	expectValue(t, b, "kept, 'gen' in globals()", "('still here', False)")
	expectValue(t, p, "next(gen)", "1")
	if left := p.LeftOut(); left != nil {
		t.Errorf("LeftOut of the parent = %q", left)
	}
	// The slice is the caller's.
	b.LeftOut()[0] = "changed"
	if left := b.LeftOut(); !reflect.DeepEqual(left, want) {
		t.Errorf("LeftOut after a change to a copy = %q", left)
	}
	// A restored session's is its snapshot's list.
	data := snapshotOf(t, p)
	if r := restored(t, data); !reflect.DeepEqual(r.LeftOut(), want) {
		t.Errorf("LeftOut of a restored session = %q, want %q", r.LeftOut(), want)
	}
	// A fresh interpreter lacks nothing it was given; nor does a closed one.
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	if left := b.LeftOut(); left != nil {
		t.Errorf("LeftOut after Restart = %q", left)
	}
	c := forked(t, p)
	c.Close()
	if left := c.LeftOut(); left != nil {
		t.Errorf("LeftOut after Close = %q", left)
	}
}

func TestForkBusyDeadAndClosed(t *testing.T) {
	s := newTestSession(t)
	done := busy(s)
	b, err := s.Fork()
	if b != nil {
		t.Errorf("Fork during a run gave a session")
	}
	expectError(t, err, "Fork", ErrBusy,
		"codeinterp: Fork: "+ErrBusy.Error()+": another call on this session is in progress")
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	run(t, s, "import os\nos._exit(3)")
	b, err = s.Fork()
	var e *Error
	if b != nil || !errors.As(err, &e) || e.Op != "Fork" || e.Code != ErrDead {
		t.Errorf("Fork of a dead session: %v, %v", b, err)
	}
	s.Close()
	b, err = s.Fork()
	if b != nil || !errors.Is(err, ErrClosed) || err.Error() != "codeinterp: Fork: "+ErrClosed.Error() {
		t.Errorf("Fork after Close: %v, %v", b, err)
	}
}
