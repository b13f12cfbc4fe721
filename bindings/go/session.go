package codeinterp

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <codeinterp.h>

extern int cigoEvent(char *line, size_t len, uintptr_t handle);

static int cigo_event(const char *line, size_t len, void *payload)
{
	return cigoEvent((char *)line, len, (uintptr_t)payload);
}

// The payload is a cgo.Handle, a number the C side only hands back.
static int cigo_set_event_fn(ci_config *cfg, uintptr_t handle)
{
	return ci_config_set_event_fn(cfg, cigo_event, (void *)handle);
}

extern void cigoOutput(int stream, char *data, size_t len, uintptr_t handle);

extern int cigoInput(char *prompt, int password, char **reply, uintptr_t handle);

static void cigo_output(int stream, const char *data, size_t len, void *payload)
{
	cigoOutput(stream, (char *)data, len, (uintptr_t)payload);
}

static int cigo_input(const char *prompt, int password, char **reply, void *payload)
{
	return cigoInput((char *)prompt, password, reply, (uintptr_t)payload);
}

// ci_run_ex with the options built on the C side: a Go pointer to a
// struct holding a C function pointer and the handle would be fine, but
// this keeps every pointer the library sees C-owned.
static int cigo_run(ci_session *s, const char *code, unsigned long timeout_ms,
                    uintptr_t handle, int output, int input, ci_result **out)
{
	ci_run_options o;
	int rc = ci_run_options_init(&o, CI_RUN_OPTIONS_VERSION);
	if (rc != CI_OK)
		return rc;
	o.timeout_ms = timeout_ms;
	o.payload = (void *)handle;
	if (output)
		o.on_output = cigo_output;
	if (input)
		o.on_input = cigo_input;
	return ci_run_ex(s, code, &o, out);
}

// ci_session_new, and the failure's detail read on the same thread (it is
// kept per thread, and a goroutine may move between two cgo calls).
static int cigo_session_new(ci_session **out, const ci_config *cfg, char **detail)
{
	int rc = ci_session_new(out, cfg);
	*detail = rc != CI_OK ? strdup(ci_session_errmsg(NULL)) : NULL;
	return rc;
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Sandbox is a set of sandbox layers (CI_SANDBOX_* in codeinterp.h).
type Sandbox uint

const (
	SandboxSeccomp      Sandbox = C.CI_SANDBOX_SECCOMP      // the seccomp allowlist, on every thread
	SandboxRlimits      Sandbox = C.CI_SANDBOX_RLIMITS      // RLIMIT_AS, RLIMIT_CORE, RLIMIT_FSIZE, RLIMIT_NOFILE
	SandboxNoNewPrivs   Sandbox = C.CI_SANDBOX_NO_NEW_PRIVS // prctl(PR_SET_NO_NEW_PRIVS)
	SandboxLandlock     Sandbox = C.CI_SANDBOX_LANDLOCK     // best effort
	SandboxUnprivileged Sandbox = C.CI_SANDBOX_UNPRIVILEGED // no root uid and no capability in the worker
	SandboxUserNS       Sandbox = C.CI_SANDBOX_USERNS       // best effort
	SandboxNetNS        Sandbox = C.CI_SANDBOX_NETNS        // best effort
	SandboxIPCNS        Sandbox = C.CI_SANDBOX_IPCNS        // best effort
	SandboxUTSNS        Sandbox = C.CI_SANDBOX_UTSNS        // best effort
	SandboxMntNS        Sandbox = C.CI_SANDBOX_MNTNS        // best effort
	// SandboxPIDNS: best effort, a PID namespace of the worker's own (it is
	// pid 1 there). Only a worker forked from the zygote gets one, never a
	// worker started by exec (WithZygote(false), or $CODEINTERP_WORKER set):
	// requiring it of such a session makes NewSession fail with ErrSandbox.
	SandboxPIDNS Sandbox = C.CI_SANDBOX_PIDNS
	// SandboxTaskLimit: best effort, RLIMIT_NPROC at the task limit
	// (WithTaskLimit) counted in the worker's user namespace; set only
	// with SandboxUserNS.
	SandboxTaskLimit Sandbox = C.CI_SANDBOX_TASK_LIMIT
	// SandboxDiskQuota: best effort, the session directory as a tmpfs of
	// the disk and inode quotas (WithDiskQuota), which only a host that
	// may mount (root) has.
	SandboxDiskQuota Sandbox = C.CI_SANDBOX_DISK_QUOTA
)

// allLayers is every layer this binding knows.
const allLayers = SandboxSeccomp | SandboxRlimits | SandboxNoNewPrivs | SandboxLandlock |
	SandboxUnprivileged | SandboxUserNS | SandboxNetNS | SandboxIPCNS | SandboxUTSNS |
	SandboxMntNS | SandboxPIDNS | SandboxTaskLimit | SandboxDiskQuota

// String names the layers, as the CI_SANDBOX_* bits do in lower case,
// joined by "|": "seccomp|rlimits|no_new_privs|landlock|unprivileged|userns|
// netns|ipcns|utsns|mntns|pidns|task_limit|disk_quota"; "none" for no layer,
// and a bit this binding does not know in hex ("0x2000").
func (m Sandbox) String() string {
	return bitNames(uint(m), []string{"seccomp", "rlimits", "no_new_privs", "landlock",
		"unprivileged", "userns", "netns", "ipcns", "utsns", "mntns", "pidns", "task_limit",
		"disk_quota"})
}

// Option is a setting for NewSession and RestoreSession, which a session
// keeps for Fork; see the With* functions. The library checks every value
// and NewSession fails with ErrInvalid for one out of range, its Detail
// naming the option, the value and the range ("WithFigureDPI(5) refused:
// must be 10 to 600").
type Option struct {
	name string // "WithTimeout"
	arg  string // the value given, as the error shows it: "0s"
	want string // what the library takes: "1 ms to 24 h"
	set  func(cfg *C.ci_config) C.int
}

// refused is the detail of an Option the library refused.
func (o Option) refused(rc C.int) string {
	if rc != C.CI_EINVAL || o.want == "" {
		return fmt.Sprintf("%s(%s) refused", o.name, o.arg)
	}
	return fmt.Sprintf("%s(%s) refused: must be %s", o.name, o.arg, o.want)
}

// ms converts a duration to whole milliseconds, rounding up; 0 (refused by
// the library) for d <= 0.
func ms(d time.Duration) C.ulong {
	if d <= 0 {
		return 0
	}
	return C.ulong((d + time.Millisecond - 1) / time.Millisecond)
}

// WithTimeout sets the wall-clock limit of each run (default 30 s); at the
// limit the cell is interrupted and its status is StatusTimeout.
func WithTimeout(d time.Duration) Option {
	return Option{"WithTimeout", fmt.Sprint(d),
		"1 ms to 24 h",
		func(c *C.ci_config) C.int { return C.ci_config_set_timeout_ms(c, ms(d)) }}
}

// WithGrace sets how long an interrupted cell has to give way before its
// worker is killed (default 2 s).
func WithGrace(d time.Duration) Option {
	return Option{"WithGrace", fmt.Sprint(d),
		"1 ms to 10 min",
		func(c *C.ci_config) C.int { return C.ci_config_set_grace_ms(c, ms(d)) }}
}

// WithStartupTimeout sets how long NewSession and Restart wait for the
// worker to be ready (default 60 s).
func WithStartupTimeout(d time.Duration) Option {
	return Option{"WithStartupTimeout", fmt.Sprint(d), "1 ms to 10 min", func(c *C.ci_config) C.int {
		return C.ci_config_set_startup_timeout_ms(c, ms(d))
	}}
}

// WithMemoryLimit sets the worker's address-space limit in bytes (default
// 2 GiB, at least 512 MiB).
func WithMemoryLimit(bytes uint64) Option {
	return Option{"WithMemoryLimit", fmt.Sprint(bytes),
		"512 MiB (536870912 bytes) to 2^63-1 bytes",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_memory_limit(c, C.ci_uint64(bytes))
		}}
}

// WithOutputLimit sets how many bytes of stdout, and of stderr, one run
// keeps (default 1 MiB). A stream that passes it keeps its head and its
// tail, with a marker line between them that says what was left out and
// where the whole stream is (Result.SpillFile).
func WithOutputLimit(bytes uint64) Option {
	return Option{"WithOutputLimit", fmt.Sprint(bytes),
		"1024 bytes to 256 MiB (268435456 bytes)",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_output_limit(c, C.size_t(bytes))
		}}
}

// WithSpillLimit sets the largest spill file, in bytes (default 16 MiB);
// 0 keeps none. A stream that passes the output limit is written whole,
// up to this many bytes, to .outputs/cell-N.stdout (or .stderr) in the
// workspace, which Result.SpillFile names; a session keeps the spill
// files of its last 8 cut streams.
func WithSpillLimit(bytes uint64) Option {
	return Option{"WithSpillLimit", fmt.Sprint(bytes),
		"0 (no spill files), or 1024 bytes to 4 GiB (4294967296 bytes)",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_spill_limit(c, C.ci_uint64(bytes))
		}}
}

// WithDisplayLimits caps rich outputs: bytes for one output and for all of
// a run's outputs (defaults 16 MiB and 64 MiB).
func WithDisplayLimits(perOutput, perRun uint64) Option {
	return Option{"WithDisplayLimits", fmt.Sprint(perOutput, ", ", perRun),
		"perOutput at least 1024 bytes, perRun from perOutput to 1 GiB (1073741824 bytes)",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_display_limits(c, C.size_t(perOutput), C.size_t(perRun))
		}}
}

// WithFigureDPI sets the resolution of matplotlib figures (default 100).
func WithFigureDPI(dpi uint) Option {
	return Option{"WithFigureDPI", fmt.Sprint(dpi), "10 to 600", func(c *C.ci_config) C.int {
		return C.ci_config_set_figure_dpi(c, C.unsigned(dpi))
	}}
}

// WithFileLimit sets the largest file a cell may write and PutFile and
// GetFile move (default 1 GiB).
func WithFileLimit(bytes uint64) Option {
	return Option{"WithFileLimit", fmt.Sprint(bytes),
		"1 byte to 2^63-1 bytes",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_file_limit(c, C.ci_uint64(bytes))
		}}
}

// WithTaskLimit sets the most processes and threads a session's worker
// may have at once (default 256); past it a cell's new thread fails.
func WithTaskLimit(tasks uint) Option {
	return Option{"WithTaskLimit", fmt.Sprint(tasks), "16 to 65536 tasks",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_task_limit(c, C.ulong(tasks))
		}}
}

// WithDiskQuota sets the most bytes the session's directory holds (default
// 512 MiB; 0 for none), a tmpfs of its own that a root host mounts; past
// it a cell gets ENOSPC and PutFile ErrTooBig.
func WithDiskQuota(bytes uint64) Option {
	return Option{"WithDiskQuota", fmt.Sprint(bytes), "0, or 1 MiB to 2^63-1 bytes",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_disk_quota(c, C.ci_uint64(bytes))
		}}
}

// WithInodeQuota sets the most files and directories the session's
// directory holds (default 65536), with the disk quota.
func WithInodeQuota(inodes uint64) Option {
	return Option{"WithInodeQuota", fmt.Sprint(inodes), "64 to 4294967295 inodes",
		func(c *C.ci_config) C.int {
			return C.ci_config_set_inode_quota(c, C.ci_uint64(inodes))
		}}
}

// WithWorkspaceRoot sets the absolute directory under which the session
// creates its private directory (default $TMPDIR, else /tmp).
func WithWorkspaceRoot(dir string) Option {
	return Option{"WithWorkspaceRoot", quote(dir),
		"an absolute path of at most 3000 bytes, without NUL",
		func(c *C.ci_config) C.int {
			if hasNUL(dir) {
				return C.CI_EINVAL
			}
			cdir := C.CString(dir)
			defer C.free(unsafe.Pointer(cdir))
			return C.ci_config_set_workspace_root(c, cdir)
		}}
}

// WithPreload sets the Python modules the worker imports before the first
// cell: names joined by commas, without spaces, such as
// "numpy,pandas,scipy.stats" (default "numpy,pandas,matplotlib.pyplot";
// matplotlib.pyplot is imported whatever the list says). A malformed list
// fails with ErrInvalid, a module that cannot be imported with ErrSpawn
// and its traceback in the Detail. Each distinct list has its own zygote
// (see WithZygote), whose first session pays its start.
func WithPreload(modules string) Option {
	return Option{"WithPreload", quote(modules),
		"module names such as \"numpy,scipy.stats\": joined by commas, no spaces, at most 1024 bytes",
		func(c *C.ci_config) C.int {
			if hasNUL(modules) {
				return C.CI_EINVAL
			}
			cmods := C.CString(modules)
			defer C.free(unsafe.Pointer(cmods))
			return C.ci_config_set_preload(c, cmods)
		}}
}

// WithZygote sets whether the worker is forked from a zygote kept warm per
// preload list (true, the default: milliseconds once the zygote is up) or
// started by fork + exec (false: about 0.6 s each, with an address layout
// and hash seed of its own; sessions of one zygote share them). Only a
// worker forked from the zygote can have a PID namespace of its own
// (SandboxPIDNS). See ci_config_set_zygote(3) and SECURITY.md.
// $CODEINTERP_WORKER turns the zygote off whatever this says.
func WithZygote(enabled bool) Option {
	return Option{"WithZygote", fmt.Sprint(enabled), "",
		func(c *C.ci_config) C.int { return C.ci_config_set_zygote(c, cBool(enabled)) }}
}

// WithRollback sets whether a cell that kills the worker (its grace period
// ran out, a crash in an extension, a sandbox violation, os._exit) leaves
// the session as it was just before that cell (true) or dead until
// Restart (false, the default). Such a cell's Result still has
// StatusKilled and its Error, with RolledBack true: a checkpoint the
// worker forked before the cell (copy on write, about 10 ms a cell for a
// session holding 100 MB) has taken its place with every variable and import, so
// the next Run works at once. Files the cell wrote stay as it left them.
// It needs a worker forked from the zygote, in a PID namespace of its own
// (SandboxPIDNS): without one the session starts without rollback and
// RollbackActive reports false. See ci_config_set_rollback(3).
func WithRollback(enabled bool) Option {
	return Option{"WithRollback", fmt.Sprint(enabled), "",
		func(c *C.ci_config) C.int { return C.ci_config_set_rollback(c, cBool(enabled)) }}
}

// WithRequiredSandbox sets the layers without which NewSession and
// Restart fail with ErrSandbox (default seccomp, rlimits, no_new_privs).
func WithRequiredSandbox(layers Sandbox) Option {
	return Option{"WithRequiredSandbox", layers.String(),
		"made of the layers this library knows: " + allLayers.String(),
		func(c *C.ci_config) C.int {
			return C.ci_config_require_sandbox(c, C.unsigned(layers))
		}}
}

// ManifestKeySize is the length of the public key WithManifestKey takes:
// an Ed25519 public key.
const ManifestKeySize = 32

// WithManifest limits the worker to the Python packages a signed package
// manifest lists, and has their files checked before any cell runs.
// manifestPath names a manifest that codeinterp-manifest(1) made and
// signed; publicKeyPath the public key that must have signed it (the
// NAME.pub of "codeinterp-manifest keygen NAME"). Both files are read by
// NewSession and Restart, which fail with ErrManifest, the cause in the
// Detail (a file that cannot be read and its path, another key, a listed
// file changed or missing, an unlisted file present, no Landlock...) when
// the manifest is malformed, badly signed or does not match the installed
// files. The manifest needs Landlock (SandboxLandlock). An empty path
// fails with ErrInvalid. See ci_config_set_manifest(3) and SECURITY.md.
func WithManifest(manifestPath, publicKeyPath string) Option {
	return Option{"WithManifest", quote(manifestPath) + ", " + quote(publicKeyPath),
		"two non-empty paths of at most 4096 bytes, without NUL",
		func(c *C.ci_config) C.int {
			if manifestPath == "" || publicKeyPath == "" || hasNUL(manifestPath) || hasNUL(publicKeyPath) {
				return C.CI_EINVAL
			}
			cpath := C.CString(manifestPath)
			defer C.free(unsafe.Pointer(cpath))
			ckey := C.CString(publicKeyPath)
			defer C.free(unsafe.Pointer(ckey))
			return C.ci_config_set_manifest(c, cpath, ckey)
		}}
}

// WithManifestKey is WithManifest with the public key given as its
// ManifestKeySize (32) bytes instead of a file; other lengths fail with
// ErrInvalid. See ci_config_set_manifest_key(3).
func WithManifestKey(manifestPath string, publicKey []byte) Option {
	key := append([]byte(nil), publicKey...) // a later change to the caller's slice is not seen
	return Option{"WithManifestKey", quote(manifestPath) + fmt.Sprintf(", %d bytes", len(key)),
		"a non-empty path of at most 4096 bytes, without NUL, and a key of ManifestKeySize (32) bytes",
		func(c *C.ci_config) C.int {
			if manifestPath == "" || hasNUL(manifestPath) || len(key) != ManifestKeySize {
				return C.CI_EINVAL
			}
			cpath := C.CString(manifestPath)
			defer C.free(unsafe.Pointer(cpath))
			ckey := C.CBytes(key)
			defer C.free(ckey)
			return C.ci_config_set_manifest_key(c, cpath, (*C.uchar)(ckey), C.size_t(len(key)))
		}}
}

// WithWheelhouse lets cells install packages an operator approved: the
// wheel files of the directory dir that the session's signed package
// manifest lists, each checked against its SHA-256 ("codeinterp-manifest
// create ... --wheelhouse DIR" lists them). In a cell, "%pip install NAME",
// "!pip install NAME" and pip.main(["install", NAME]) then install NAME and
// what it requires, from those wheels only, into the session's own site
// directory. It needs WithManifest (or WithManifestKey): NewSession and
// Restart fail with ErrManifest, the cause in the Detail, for a wheelhouse
// without a manifest or one that is not a directory. An empty dir turns
// the wheelhouse off again (the default: no installs). See
// ci_config_set_wheelhouse(3) and docs/wheelhouse.md.
func WithWheelhouse(dir string) Option {
	return Option{"WithWheelhouse", quote(dir),
		"a path of at most 4096 bytes, without NUL (empty: no wheelhouse)",
		func(c *C.ci_config) C.int {
			if dir == "" {
				return C.ci_config_set_wheelhouse(c, nil)
			}
			if hasNUL(dir) {
				return C.CI_EINVAL
			}
			cdir := C.CString(dir)
			defer C.free(unsafe.Pointer(cdir))
			return C.ci_config_set_wheelhouse(c, cdir)
		}}
}

// WithAuditLog makes the host append one JSON line to the file at path for
// each event of the session: its start (sandbox layers, limits, manifest),
// each cell (SHA-256, status, times, changed files), each PutFile and
// GetFile, each host function call, each refusal of the sandbox (a
// system call, a path, a socket), restarts, kills and its end, each line chained to the one before by
// SHA-256 ("codeinterp-audit verify FILE" checks it; docs/audit-log.md is
// the schema). The log fails closed: NewSession fails with ErrIO, the
// Detail naming the file, when it cannot record the start; after another
// event it could not record, Run, PutFile and GetFile fail with ErrIO until
// a Restart is recorded. See ci_config_set_audit_log(3).
func WithAuditLog(path string) Option {
	return Option{"WithAuditLog", quote(path),
		"a non-empty path of at most 4096 bytes, without NUL",
		func(c *C.ci_config) C.int {
			if path == "" || hasNUL(path) {
				return C.CI_EINVAL
			}
			cpath := C.CString(path)
			defer C.free(unsafe.Pointer(cpath))
			return C.ci_config_set_audit_log(c, cpath)
		}}
}

// EventFunc receives each audit event's JSON line (without its newline)
// as the audit log gets it; an error it returns counts as a failed write
// of the log (see WithAuditLog).
type EventFunc func(line string) error

// WithEventFunc passes each audit event of the session to fn too, with or
// without WithAuditLog, for a host that ships the events elsewhere. fn
// runs on the goroutine of the call that made the event (NewSession, Run,
// PutFile, GetFile, Restart, Close), one event at a time, and must not
// call this session. A panic in fn is recovered and counts as a failed
// write. See ci_config_set_event_fn(3).
func WithEventFunc(fn EventFunc) Option {
	return Option{"WithEventFunc", "fn", "a function", func(c *C.ci_config) C.int {
		if fn == nil {
			return C.CI_EINVAL
		}
		h := cgo.NewHandle(fn)
		rc := C.cigo_set_event_fn(c, C.uintptr_t(h))
		if rc != C.CI_OK {
			h.Delete()
		} else {
			pendingFunctions = append(pendingFunctions, h)
		}
		return rc
	}}
}

// cigoEvent is the ci_event_fn trampoline: 0 if fn took the line.
//
//export cigoEvent
func cigoEvent(line *C.char, n C.size_t, handle C.uintptr_t) (rc C.int) {
	defer func() {
		if recover() != nil {
			rc = -1
		}
	}()
	if cgo.Handle(handle).Value().(EventFunc)(C.GoStringN(line, C.int(n))) != nil {
		return -1
	}
	return 0
}

// Session is one sandboxed interpreter. Its methods may be called from any
// goroutine, but the session does one thing at a time: a call made while
// another is in progress (a second Run, or PutFile during a Run) fails at
// once with ErrBusy, as the C library refuses a second concurrent run.
// Interrupt, PID, Sandbox, Workspace, LeftOut and Closed may be called at any
// time, Close too (it interrupts a running cell and waits for its end).
type Session struct {
	mu        sync.Mutex   // held by every call into the library but Interrupt
	freeMu    sync.RWMutex // Interrupt (read) against the free in Close (write)
	ptr       *C.ci_session
	closed    atomic.Bool
	workspace string
	pid       atomic.Int64             // last known worker pid, -1 when dead or closed
	sandbox   atomic.Uint32            // last known layers
	rollback  atomic.Bool              // last known ci_session_rollback_active
	functions []cgo.Handle             // of its host functions (WithFunction), deleted by Close
	opts      []Option                 // it was started with, for Fork
	leftOut   atomic.Pointer[[]string] // ci_session_left_out, nil when empty or closed
	// A panic in a host function, for Run to raise again; s.mu is held.
	fnPanicked bool
	fnPanic    interface{}
}

// newSessionMu keeps the options of NewSession and RestoreSession calls
// apart while they add host functions (pendingFunctions).
var newSessionMu sync.Mutex

// NewSession starts a session: a private directory and a sandboxed worker
// with the preload list loaded (by default numpy, pandas and matplotlib).
// It blocks for the worker's start-up: about 0.6 s for the first session
// of a preload list or one WithZygote(false), milliseconds for the next
// ones. The session must be closed with Close; a session that becomes
// unreachable is closed by a finalizer, but do not rely on it.
func NewSession(opts ...Option) (*Session, error) {
	return startSession("NewSession", opts, func(cfg *C.ci_config, p **C.ci_session, detail **C.char) C.int {
		return C.cigo_session_new(p, cfg, detail)
	})
}

// startFunc starts a session of cfg into *p, the failure's detail (C
// malloc'ed, or NULL) into *detail.
type startFunc func(cfg *C.ci_config, p **C.ci_session, detail **C.char) C.int

// startSession is NewSession and RestoreSession: the options applied to a
// config, the session started by start, its errors named for op.
func startSession(op string, opts []Option, start startFunc) (*Session, error) {
	cfg := C.ci_config_new()
	if cfg == nil {
		return nil, newError(op, C.CI_ENOMEM, "")
	}
	defer C.ci_config_free(cfg)
	handles, err := applyOptions(op, cfg, opts)
	defer func() {
		for _, h := range handles { // nil once the session has them
			h.Delete()
		}
	}()
	if err != nil {
		return nil, err
	}
	s := &Session{}
	for _, h := range handles {
		if f, ok := h.Value().(*hostFunction); ok {
			f.session = s
		}
	}
	var p *C.ci_session
	var detail *C.char
	rc := start(cfg, &p, &detail)
	if rc != C.CI_OK {
		return nil, newError(op, rc, takeDetail(detail))
	}
	s.ptr, s.workspace = p, C.GoString(C.ci_session_workspace(p))
	s.functions, handles = handles, nil
	s.opts = append([]Option(nil), opts...)
	s.refresh()
	s.readLeftOut()
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

// applyOptions sets opts on cfg and returns the handles of the host
// functions (and event function) they added, also on failure. Only this
// holds newSessionMu, not the start of the session, so that a long
// RestoreSession does not hold up other sessions' starts.
func applyOptions(op string, cfg *C.ci_config, opts []Option) ([]cgo.Handle, error) {
	newSessionMu.Lock()
	defer newSessionMu.Unlock()
	defer func() { pendingFunctions = nil }()
	for _, o := range opts {
		if o.set == nil {
			return pendingFunctions, newError(op, C.CI_EINVAL,
				"a zero Option{}: make options with the With* functions")
		}
		if rc := o.set(cfg); rc != C.CI_OK {
			return pendingFunctions, newError(op, rc, o.refused(rc))
		}
	}
	return pendingFunctions, nil
}

// takeDetail copies and frees a detail a cigo_* helper strdup'ed; "" for
// NULL.
func takeDetail(detail *C.char) string {
	if detail == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(detail))
	return C.GoString(detail)
}

// refresh caches the worker's pid and layers; s.mu is held.
func (s *Session) refresh() {
	if s.ptr == nil {
		s.pid.Store(-1)
		s.sandbox.Store(0)
		s.rollback.Store(false)
		s.leftOut.Store(nil)
		return
	}
	s.pid.Store(int64(C.ci_session_pid(s.ptr)))
	s.sandbox.Store(uint32(C.ci_session_sandbox(s.ptr)))
	s.rollback.Store(C.ci_session_rollback_active(s.ptr) != 0)
}

// lock takes s.mu for op without waiting: ErrBusy if another call holds it,
// ErrClosed after Close.
func (s *Session) lock(op string) error {
	if s.closed.Load() {
		return closedError(op)
	}
	if !s.mu.TryLock() {
		return newError(op, C.CI_EBUSY, "another call on this session is in progress")
	}
	if s.ptr == nil {
		s.mu.Unlock()
		return closedError(op)
	}
	return nil
}

// fail builds the error of a failed call; s.mu is held.
func (s *Session) fail(op string, rc C.int) error {
	return newError(op, rc, C.GoString(C.ci_session_errmsg(s.ptr)))
}

// RunOptions are the options of one run.
type RunOptions struct {
	// Timeout is this run's wall-clock limit instead of the session's;
	// 0 keeps the session's. It is rounded up to whole milliseconds.
	Timeout time.Duration
	// OnOutput, when set, receives stdout and stderr while the cell runs,
	// in whole lines as they arrive: each chunk ends with a line break,
	// except a line of 16 KiB or more (given in pieces cut on UTF-8
	// character boundaries), a partial line the cell leaves waiting 5 ms
	// (a progress bar printed with end=''), and what is left when the run
	// ends. A stream that passes the output limit gets one note line,
	// saying so and where the whole stream goes, and nothing more. It is
	// called on the goroutine that called Run, and data is its own copy.
	// It may call Interrupt; other calls on the session fail with ErrBusy,
	// and it must not call Close or runtime.Goexit (t.FailNow). If it
	// panics, the cell is interrupted and Run panics with the same value.
	OnOutput func(stream Stream, data []byte)
	// OnInput, when set, answers the cell's input() and getpass.getpass()
	// as a Jupyter front end does: it gets the prompt the cell gave (the
	// cell's text, as untrusted as its output) and whether it is a
	// password, and returns the line (without its newline; at most 1 MiB
	// of UTF-8, no NUL byte) and true, or false to refuse. Without it, or
	// when it refuses, input() raises StdinNotImplementedError in the cell.
	// The cell waits meanwhile and its timeout runs on. It is called on the
	// goroutine that called Run; it may call Interrupt, and the rules of
	// OnOutput hold: if it panics, the input() is refused, the cell is
	// interrupted and Run panics with the same value.
	OnInput func(prompt string, password bool) (answer string, ok bool)
}

// The limits of a run the library sets (ci_run, ci_run_ex).
const (
	maxCellBytes  = 16 << 20
	maxRunTimeout = 24 * time.Hour
)

// Run runs one cell, keeping the interpreter state between cells; if the
// cell ends with an expression, its repr is the Result's Value. The error
// is non-nil only when the call failed (ErrDead, ErrBusy, ErrTooBig,
// ErrClosed...); an exception, a timeout or a killed worker is a Result.
func (s *Session) Run(code string) (*Result, error) {
	return s.RunWithOptions(code, RunOptions{})
}

// RunWithOptions is Run with a per-run timeout and a streaming callback.
func (s *Session) RunWithOptions(code string, opts RunOptions) (*Result, error) {
	const op = "Run"
	if opts.Timeout < 0 || opts.Timeout > maxRunTimeout {
		return nil, newError(op, C.CI_EINVAL, fmt.Sprintf("RunOptions.Timeout %v refused: must be "+
			"1 ms to 24 h, or 0 for the session's", opts.Timeout))
	}
	if i := strings.IndexByte(code, 0); i >= 0 {
		return nil, newError(op, C.CI_EINVAL, fmt.Sprintf("code holds a NUL byte at offset %d: "+
			"the cell is passed to C as a string", i))
	}
	if len(code) > maxCellBytes {
		return nil, newError(op, C.CI_ETOOBIG, fmt.Sprintf("code of %d bytes is over the limit "+
			"of a cell, 16 MiB (%d bytes)", len(code), maxCellBytes))
	}
	if err := s.lock(op); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	ccode := C.CString(code)
	defer C.free(unsafe.Pointer(ccode))
	var handle C.uintptr_t
	var st *runState
	if opts.OnOutput != nil || opts.OnInput != nil {
		st = &runState{s: s, fn: opts.OnOutput, input: opts.OnInput}
		h := cgo.NewHandle(st)
		defer h.Delete()
		handle = C.uintptr_t(h)
	}
	var r *C.ci_result
	rc := C.cigo_run(s.ptr, ccode, ms(opts.Timeout), handle, cBool(opts.OnOutput != nil),
		cBool(opts.OnInput != nil), &r)
	if rc != C.CI_OK {
		err := s.fail(op, rc)
		s.refresh()
		return nil, err
	}
	defer C.ci_result_free(r)
	s.refresh()
	if st != nil && st.panicked {
		panic(st.panicVal)
	}
	if s.fnPanicked {
		p := s.fnPanic
		s.fnPanicked, s.fnPanic = false, nil
		panic(p)
	}
	return copyResult(r), nil
}

// Interrupt stops the cell running on the session, as Jupyter's "interrupt
// kernel" does: the cell gets a KeyboardInterrupt, its Result has
// StatusInterrupted, and the state is kept (a cell that does not give way
// within the grace period is killed). Safe from any goroutine at any time.
// It reports whether a cell was running; it never affects a later cell.
func (s *Session) Interrupt() bool {
	s.freeMu.RLock()
	defer s.freeMu.RUnlock()
	if s.ptr == nil {
		return false
	}
	return C.ci_session_interrupt(s.ptr) == 1
}

// Close kills the worker and removes the session's directory with
// everything in it. A cell still running is interrupted first, and Close
// waits for its Run to return. Closing twice is harmless; every later call
// on the session fails with ErrClosed.
func (s *Session) Close() error {
	s.closed.Store(true)
	for !s.mu.TryLock() {
		if s.Interrupt() {
			s.mu.Lock()
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	defer s.mu.Unlock()
	s.freeMu.Lock()
	p := s.ptr
	s.ptr = nil
	s.freeMu.Unlock()
	if p != nil {
		C.ci_session_free(p)
		runtime.SetFinalizer(s, nil)
		for _, h := range s.functions {
			h.Delete()
		}
		s.functions = nil
	}
	s.refresh()
	return nil
}

// Restart replaces the worker with a fresh one: empty interpreter state,
// execution count back to 0 (and LeftOut empty), same workspace and files.
// It works on live and dead sessions alike; on failure the session is dead
// and may be restarted again.
func (s *Session) Restart() error {
	if err := s.lock("Restart"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	rc := C.ci_session_restart(s.ptr)
	var err error
	if rc != C.CI_OK {
		err = s.fail("Restart", rc)
	}
	s.refresh()
	s.readLeftOut()
	return err
}

// PutFile writes data to the file name in the workspace, replacing any
// file of that name atomically. name is relative to the workspace ("/"
// separates existing subdirectories); absolute names, "." and ".." are
// refused with ErrInvalid. It works on a dead session too.
func (s *Session) PutFile(name string, data []byte) error {
	const op = "PutFile"
	if err := checkName(op, name); err != nil {
		return err
	}
	if err := s.lock(op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	if rc := C.ci_session_put_file(s.ptr, cname, p, C.size_t(len(data))); rc != C.CI_OK {
		return s.fail(op, rc)
	}
	return nil
}

// GetFile reads the whole file name from the workspace. Links and files
// with several hard links are refused (ErrUnsafe); a missing file is
// ErrNotFound.
func (s *Session) GetFile(name string) ([]byte, error) {
	const op = "GetFile"
	if err := checkName(op, name); err != nil {
		return nil, err
	}
	if err := s.lock(op); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var data unsafe.Pointer
	var n C.size_t
	if rc := C.ci_session_get_file(s.ptr, cname, &data, &n); rc != C.CI_OK {
		return nil, s.fail(op, rc)
	}
	defer C.ci_free(data)
	return goBytes(data, n), nil
}

// Workspace returns the absolute path of the session's workspace, the
// cell's working directory. It stays the same after Close (the directory
// is gone then).
func (s *Session) Workspace() string { return s.workspace }

// PID returns the worker's process id, or -1 if the worker is dead or the
// session closed. It never waits: during a run it gives the worker that
// runs the cell (a worker only dies or changes during Run, Restart and
// Close, which update it).
func (s *Session) PID() int { return int(s.pid.Load()) }

// Pid is PID.
//
// Deprecated: use PID, as Go spells the initialism.
func (s *Session) Pid() int { return s.PID() }

// Closed reports whether Close was called. It never waits.
func (s *Session) Closed() bool { return s.closed.Load() }

// Sandbox returns the layers the current worker applied; 0 if it is dead
// or the session closed. It never waits, as PID.
func (s *Session) Sandbox() Sandbox { return Sandbox(s.sandbox.Load()) }

// RollbackActive reports whether a cell that kills the worker will be
// rolled back: the session has WithRollback(true) and got what it needs
// (a worker forked from the zygote, in a PID namespace of its own). False
// if the worker is dead or the session closed. It never waits, as PID.
func (s *Session) RollbackActive() bool { return s.rollback.Load() }

// String describes the session for logs.
func (s *Session) String() string {
	return fmt.Sprintf("codeinterp.Session{pid: %d, workspace: %q}", s.PID(), s.workspace)
}
