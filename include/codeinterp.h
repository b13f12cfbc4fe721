/*
 * codeinterp: a sandboxed, stateful Python interpreter for AI agents.
 *
 * This header is the whole public API. Anything not declared here is
 * private and may change without notice.
 *
 * The recipe (error checks left out for brevity):
 *
 *     ci_session *s;
 *     ci_result  *r;
 *     ci_session_new(&s, NULL);                  1. start a sandboxed worker
 *     ci_run(s, "x = 6 * 7\nx", &r);             2. run a cell
 *     if (ci_result_status(r) == CI_STATUS_OK)   3. read the result
 *         printf("%s\n", ci_result_value(r));    -> "42"
 *     ci_result_free(r);                         4. free the result...
 *     ci_session_free(s);                        5. ...and the session
 *
 * Conventions, as in libgit2 and SQLite:
 *  - Functions that can fail return CI_OK (0) or a negative CI_E* code;
 *    ci_strerror() names any code and ci_session_errmsg() gives the
 *    detail of the last failure on a session.
 *  - A cell's fate (an exception, a timeout, a killed worker) is not a
 *    failed call: ci_run() returns CI_OK and the result's status says
 *    what happened to the cell.
 *  - What comes back through an out parameter belongs to the caller and
 *    goes back through its own free function. Getters return borrowed
 *    pointers that live as long as the object they came from.
 *  - Input strings are copied; the caller keeps ownership of its inputs.
 *  - Freeing NULL is a harmless no-op.
 *  - Thread safety: the library has no global mutable state apart from
 *    an internal spawner thread and the zygotes (see ci_session_new and
 *    ci_config_set_zygote), both behind locks of their own. One session (and
 *    its results) must be used by one thread at a time; different
 *    sessions may be used concurrently from different threads. A second
 *    concurrent ci_run() on the same session is detected and refused
 *    with CI_EBUSY, but other concurrent calls on one session are
 *    undefined behaviour.
 */
#ifndef CODEINTERP_H
#define CODEINTERP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CI_VERSION_MAJOR 0
#define CI_VERSION_MINOR 1
#define CI_VERSION_PATCH 0
/* The version as one number for #if: 100 is 0.1.0, 10203 would be 1.2.3. */
#define CI_VERSION_NUMBER \
    (CI_VERSION_MAJOR * 10000 + CI_VERSION_MINOR * 100 + CI_VERSION_PATCH)

#if defined(__GNUC__) && !defined(CI_STATIC)
#define CI_API __attribute__((visibility("default")))
#else
#define CI_API
#endif

/*
 * ci_version - the version of the library the program runs with,
 * "MAJOR.MINOR.PATCH" ("0.1.0"); the CI_VERSION_* macros give the version
 * of the header it was compiled against.
 * @return a string with static storage duration; never NULL. Thread safe.
 */
CI_API const char *ci_version(void);

/*
 * An unsigned 64-bit number of bytes or microseconds. "long long" is C99;
 * __extension__ lets a C89 -pedantic build of this header accept it.
 */
#if defined(__GNUC__)
__extension__ typedef unsigned long long ci_uint64;
#else
typedef unsigned long long ci_uint64;
#endif

typedef struct ci_config ci_config;
typedef struct ci_session ci_session;
typedef struct ci_result ci_result;

/*
 * Return codes: CI_OK or a negative value from this one list, which is
 * only ever appended to. X(name, value, message).
 */
#define CI_ERRORS(X)                                                        \
    X(CI_OK, 0, "success")                                                  \
    X(CI_EINVAL, -1, "invalid argument")                                    \
    X(CI_ENOMEM, -2, "out of memory")                                       \
    X(CI_ESPAWN, -3, "the worker process could not be started")             \
    X(CI_EDEAD, -4, "the session's worker is dead; call ci_session_restart") \
    X(CI_EBUSY, -5, "a run is already in progress on this session")         \
    X(CI_EPROTO, -6, "the worker broke the protocol")                       \
    X(CI_EIO, -7, "input/output error")                                     \
    X(CI_ENOENT, -8, "no such file in the workspace")                       \
    X(CI_ETOOBIG, -9, "size over the limit")                                \
    X(CI_EUNSAFE, -10, "refused: a link, or not a regular file")          \
    X(CI_ESANDBOX, -11, "a required sandbox layer is not available") \
    X(CI_EMANIFEST, -12, "the package manifest is malformed, badly signed, or does not match the installed files")

#define CI_ERROR_ENUM_(name, value, message) name = value,
#define CI_ERROR_ONE_(name, value, message) +1
/* The codes run from 0 down without a gap: the last is 1 - their count. */
enum ci_error { CI_ERRORS(CI_ERROR_ENUM_) CI_ERROR_LAST_ = 1 - (0 CI_ERRORS(CI_ERROR_ONE_)) };
#undef CI_ERROR_ONE_
#undef CI_ERROR_ENUM_

/*
 * ci_strerror - a static, human-readable message for a return code.
 * @code: CI_OK or any CI_E* value; unknown values give "unknown error".
 * @return a string with static storage duration; never NULL.
 * Thread safe.
 */
CI_API const char *ci_strerror(int code);

/*
 * What happened to a cell that was handed to the worker.
 *  CI_STATUS_OK       it ran to the end.
 *  CI_STATUS_ERROR    it raised an exception (including SyntaxError,
 *                     SystemExit and KeyboardInterrupt raised by the cell);
 *                     see ci_result_error_name() and friends.
 *  CI_STATUS_TIMEOUT  it reached the timeout and was interrupted; the
 *                     session and its state are intact.
 *  CI_STATUS_MEMORY   it ran out of memory (MemoryError at the memory
 *                     limit); the session and its state are intact.
 *  CI_STATUS_KILLED   the worker died (it crashed, exited, broke the
 *                     protocol, was killed by the sandbox, or ignored an
 *                     interrupt for the grace period). The error value
 *                     says how; the session is dead until
 *                     ci_session_restart().
 *  CI_STATUS_INTERRUPTED  ci_session_interrupt() stopped it, as Jupyter's
 *                     "interrupt kernel" does: the cell got a
 *                     KeyboardInterrupt (the error name) and the session
 *                     and its state are intact.
 */
typedef enum {
    CI_STATUS_OK,
    CI_STATUS_ERROR,
    CI_STATUS_TIMEOUT,
    CI_STATUS_MEMORY,
    CI_STATUS_KILLED,
    CI_STATUS_INTERRUPTED
} ci_status;

/*
 * ci_status_name - a status's short name, one word a log, a binding or a
 * model can print: "ok", "error", "timeout", "memory", "killed",
 * "interrupted" (CI_STATUS_OK ... CI_STATUS_INTERRUPTED); "unknown" for
 * any other value.
 * @return a string with static storage duration; never NULL.
 * Thread safe.
 */
CI_API const char *ci_status_name(ci_status status);

/*
 * Sandbox layers, as ci_session_sandbox() reports them and
 * ci_config_require_sandbox() demands them. Each bit is set only when the
 * worker applied that layer before reading its first cell; the layers
 * marked "best effort" are skipped, and their bits left clear, where the
 * kernel or a container refuses them. What each layer holds, the rule it
 * comes from, the attacks it stops and what is left where it is missing
 * are stated once, in SECURITY.md ("The layers"; "Where a kernel lacks a
 * layer"). In short:
 *  CI_SANDBOX_SECCOMP       the seccomp allowlist (seccomp(2), filter mode)
 *                           on every thread; a forbidden call kills the
 *                           worker and is reported as SandboxViolation.
 *  CI_SANDBOX_RLIMITS       RLIMIT_AS, RLIMIT_CORE, RLIMIT_FSIZE and
 *                           RLIMIT_NOFILE (setrlimit(2)), soft and hard;
 *                           RLIMIT_CPU too when a CPU limit is set
 *                           (ci_config_set_cpu_limit), and
 *                           RLIMIT_SIGPENDING 64 in a worker with a user
 *                           namespace of its own (CI_SANDBOX_USERNS).
 *  CI_SANDBOX_NO_NEW_PRIVS  prctl(PR_SET_NO_NEW_PRIVS).
 *  CI_SANDBOX_LANDLOCK      best effort: a Landlock domain (landlock(7))
 *                           granting reads of the system's libraries and
 *                           a few files, and reads and writes of regular
 *                           files and directories in the session's
 *                           workspace, config and tmp directories only;
 *                           no links, devices or execution.
 *  CI_SANDBOX_UNPRIVILEGED  no root uid and no capability in the worker
 *                           (checked with getresuid(2) and capget(2)); a
 *                           root host's worker runs as uid and gid 65534.
 *  CI_SANDBOX_USERNS        best effort: a user namespace of its own
 *                           (user_namespaces(7)) mapping only its own ids.
 *  CI_SANDBOX_NETNS         best effort: a network namespace of its own
 *                           (network_namespaces(7)) with only a loopback
 *                           that is down: nothing of the host's is
 *                           reachable, 127.0.0.1 included.
 *  CI_SANDBOX_IPCNS         best effort: an IPC namespace of its own
 *                           (ipc_namespaces(7)).
 *  CI_SANDBOX_UTSNS         best effort: a UTS namespace of its own
 *                           (uts_namespaces(7)).
 *  CI_SANDBOX_MNTNS         best effort: a mount namespace of its own
 *                           (mount_namespaces(7)) whose root, after
 *                           pivot_root(2), is a minimal read-only tree
 *                           with the session directory at its own path:
 *                           the host's other files do not exist for it.
 *  CI_SANDBOX_PIDNS         best effort, and only for a worker forked from
 *                           the zygote (see ci_config_set_zygote): pid 1
 *                           of a PID namespace of its own
 *                           (pid_namespaces(7)), with a /proc of that
 *                           namespace where the kernel allows a new proc
 *                           instance. A config that demands it with the
 *                           zygote off, or with $CODEINTERP_WORKER set,
 *                           makes every session fail with CI_ESANDBOX
 *                           before any worker starts.
 *  CI_SANDBOX_TASK_LIMIT    best effort: RLIMIT_NPROC at the task limit
 *                           (ci_config_set_task_limit), soft and hard,
 *                           counted in the worker's own user namespace,
 *                           so only its own processes and threads count;
 *                           set only with CI_SANDBOX_USERNS, since without
 *                           it the count would be of every process of
 *                           the worker's uid, other sessions' included.
 *  CI_SANDBOX_DISK_QUOTA    best effort: the session directory (its
 *                           workspace, config and tmp) is a tmpfs of its
 *                           own of the disk and inode quotas
 *                           (ci_config_set_disk_quota), mounted by the
 *                           host; only a host that may mount, root or
 *                           CAP_SYS_ADMIN over its mount namespace, has
 *                           one, and only with a disk quota set.
 */
#define CI_SANDBOX_SECCOMP 0x1u
#define CI_SANDBOX_RLIMITS 0x2u
#define CI_SANDBOX_NO_NEW_PRIVS 0x4u
#define CI_SANDBOX_LANDLOCK 0x8u
#define CI_SANDBOX_UNPRIVILEGED 0x10u
#define CI_SANDBOX_USERNS 0x20u
#define CI_SANDBOX_NETNS 0x40u
#define CI_SANDBOX_IPCNS 0x80u
#define CI_SANDBOX_UTSNS 0x100u
#define CI_SANDBOX_MNTNS 0x200u
#define CI_SANDBOX_PIDNS 0x400u
#define CI_SANDBOX_TASK_LIMIT 0x800u
#define CI_SANDBOX_DISK_QUOTA 0x1000u

/* ---------------------------------------------------------------- config */

/*
 * ci_config_new - a configuration holding the defaults listed at each
 * setter. Setters copy their arguments; a config may be freed as soon as
 * ci_session_new() has returned, and reused for any number of sessions.
 * @return a new config owned by the caller (free with ci_config_free), or
 *         NULL when memory is exhausted.
 */
CI_API ci_config *ci_config_new(void);

/* ci_config_free - frees @cfg; NULL is a no-op. */
CI_API void ci_config_free(ci_config *cfg);

/*
 * ci_config_require_sandbox - the layers (CI_SANDBOX_* bits) without which
 * ci_session_new() and ci_session_restart() fail with CI_ESANDBOX instead
 * of running cells; default CI_SANDBOX_SECCOMP | CI_SANDBOX_RLIMITS |
 * CI_SANDBOX_NO_NEW_PRIVS. Demanding CI_SANDBOX_LANDLOCK makes sessions
 * fail on kernels without Landlock (before 5.13, or with it disabled);
 * demanding a namespace bit makes them fail where the kernel or a
 * container refuses that namespace.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @mask has unknown bits.
 */
CI_API int ci_config_require_sandbox(ci_config *cfg, unsigned mask);

/*
 * ci_config_set_timeout_ms - wall-clock limit of one ci_run(), in
 * milliseconds; default 30000. At the limit the cell is interrupted
 * (KeyboardInterrupt) and the status is CI_STATUS_TIMEOUT.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @ms is 0 or over 86400000.
 */
CI_API int ci_config_set_timeout_ms(ci_config *cfg, unsigned long ms);

/*
 * ci_config_set_grace_ms - how long an interrupted cell has to give way
 * before the worker is killed (CI_STATUS_KILLED), in milliseconds;
 * default 2000. A cell stuck in C code, or one that ignores SIGINT,
 * needs this.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @ms is 0 or over 600000.
 */
CI_API int ci_config_set_grace_ms(ci_config *cfg, unsigned long ms);

/*
 * ci_config_set_startup_timeout_ms - how long ci_session_new() and
 * ci_session_restart() wait for the worker to import its libraries and
 * lock itself down, in milliseconds; default 60000.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @ms is 0 or over 600000.
 */
CI_API int ci_config_set_startup_timeout_ms(ci_config *cfg, unsigned long ms);

/*
 * ci_config_set_memory_limit - the worker's address-space limit
 * (RLIMIT_AS, setrlimit(2)), in bytes; default 2 GiB. The interpreter
 * with numpy, pandas and matplotlib loaded uses about 200 MiB of it.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @bytes is under 512 MiB or
 *         over INT64_MAX.
 */
CI_API int ci_config_set_memory_limit(ci_config *cfg, ci_uint64 bytes);

/*
 * ci_config_set_output_limit - how many bytes of stdout, and separately
 * of stderr, one run keeps, in bytes; default 1 MiB. A stream that passes
 * the limit keeps its head and its tail (half the limit each, cut after a
 * line break where one is within a quarter of the cut, else on a UTF-8
 * character boundary), with one marker line between them, in the text
 * itself, that says how many bytes and lines were left out, names the
 * limit, and says where the whole stream is (its spill file, see
 * ci_config_set_spill_limit):
 *   [... 10288890 bytes (1099991 lines) left out: stdout passed the output
 *   limit of 1 MiB; the whole output is in .outputs/cell-3.stdout ...]
 * ci_result_truncated() reports the cut and ci_result_spill_file() names
 * the file. The same limit bounds the value's repr, the error message and
 * the traceback, cut the same way, with a marker line that names the text
 * ("the traceback passed the output limit of 1 MiB"), without a file.
 * @return CI_OK; CI_EINVAL if @cfg is NULL, @bytes is under 1024 or
 *         over 256 MiB.
 */
CI_API int ci_config_set_output_limit(ci_config *cfg, size_t bytes);

/*
 * ci_config_set_spill_limit - the largest spill file, in bytes; default
 * 16 MiB; 0 keeps none. When a run's stdout (or stderr) passes the output
 * limit, the whole stream, up to this many bytes, is written by the host
 * to the workspace as .outputs/cell-N.stdout (or .stderr; N the cell's
 * execution count), owned by the worker, so the next cell can read, grep
 * or tail it and ci_session_get_file() can fetch it (when it is within
 * the file limit, which also caps it). A session keeps the spill files
 * of its last 8 cut streams and removes older ones (so spill files take
 * at most 8 times this limit of a session's disk); a cell may delete
 * them sooner.
 * @return CI_OK; CI_EINVAL if @cfg is NULL, or @bytes is not 0 and under
 *         1024, or over 4 GiB.
 */
CI_API int ci_config_set_spill_limit(ci_config *cfg, ci_uint64 bytes);

/*
 * ci_config_set_display_limits - caps on a run's rich outputs (figures,
 * display() calls, HTML tables; see ci_result_output_count), in bytes of
 * data: @per_output for one output, @per_run for all of a run's outputs
 * together; defaults 16 MiB and 64 MiB. An output over either cap is
 * left out whole (a cut PNG or HTML document would be corrupt), never
 * silently: ci_result_outputs_omitted() counts it and ci_result_truncated()
 * has CI_TRUNCATED_OUTPUTS set. A run also keeps at most CI_MAX_OUTPUTS
 * outputs, the rest counted the same way.
 * @return CI_OK; CI_EINVAL if @cfg is NULL, @per_output is under 1024,
 *         @per_run is under @per_output or over 1 GiB.
 */
CI_API int ci_config_set_display_limits(ci_config *cfg, size_t per_output, size_t per_run);

/*
 * ci_config_set_figure_dpi - the resolution, in dots per inch, of new
 * matplotlib figures (rcParams['figure.dpi']), at which they are rendered
 * to image/png outputs; default 100 (matplotlib's own), so a default
 * 6.4 x 4.8 inch figure is 640 x 480 pixels before cropping. A cell may
 * still give a figure its own (plt.figure(dpi=...)). As in IPython's inline
 * backend the PNG is cropped to what is drawn, with 0.1 inch of padding
 * (bbox_inches='tight'), so labels that stick out are not cut off.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @dpi is under 10 or over 600.
 */
CI_API int ci_config_set_figure_dpi(ci_config *cfg, unsigned dpi);

/*
 * ci_config_set_file_limit - the largest file a cell may write
 * (RLIMIT_FSIZE) and the largest file ci_session_put_file() and
 * ci_session_get_file() move, in bytes; default 1 GiB.
 * @return CI_OK; CI_EINVAL if @cfg is NULL, @bytes is 0 or over INT64_MAX.
 */
CI_API int ci_config_set_file_limit(ci_config *cfg, ci_uint64 bytes);

/*
 * ci_config_set_task_limit - the most tasks (processes and threads, the
 * worker's own main thread and the library's included) a session's worker
 * may have at once; default 256. A thread the cell starts past it fails
 * with EAGAIN (Python's threading raises RuntimeError: can't start new
 * thread), and the host and other sessions notice nothing. Enforced by
 * the kernel as RLIMIT_NPROC in the worker's own user namespace, where
 * only its own tasks count; where the worker has no user namespace
 * (CI_SANDBOX_USERNS) the limit is not set and CI_SANDBOX_TASK_LIMIT is
 * clear. Read by ci_session_new() and ci_session_restart().
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @tasks is under 16 or over
 *         65536.
 */
CI_API int ci_config_set_task_limit(ci_config *cfg, unsigned long tasks);

/*
 * ci_config_set_disk_quota - the most bytes a session may keep in its
 * directory (workspace, HOME and TMPDIR together, the host's
 * ci_session_put_file() and spill files included); default 512 MiB; 0 for
 * none. The session directory is then a tmpfs of its own (tmpfs(5),
 * size=) that the host mounts on it, so the kernel enforces it for every
 * writer, and what is in it goes when the session is freed: a cell's
 * write past it fails with ENOSPC (OSError naming the quota and its
 * size), ci_session_put_file() with CI_ETOOBIG, and the host's filesystem
 * and other sessions are untouched. Its pages are memory (or swap), not
 * disk, and not under the memory limit: a session may hold up to its
 * memory limit plus its disk quota. Mounting needs root (CAP_SYS_ADMIN
 * over the host's mount namespace); where the host may not, the session
 * has no quota and CI_SANDBOX_DISK_QUOTA is clear. A host killed before
 * ci_session_free() leaves its sessions' tmpfs mounted until a session
 * of the same root removes its stale directory (ci_session_new).
 * Read by ci_session_new().
 * @return CI_OK; CI_EINVAL if @cfg is NULL, or @bytes is not 0 and under
 *         1 MiB, or over INT64_MAX.
 */
CI_API int ci_config_set_disk_quota(ci_config *cfg, ci_uint64 bytes);

/*
 * ci_config_set_inode_quota - the most files, directories and other
 * inodes a session's directory may hold (tmpfs nr_inodes=), with the
 * disk quota; default 65536. Past it a cell's new file fails with ENOSPC
 * (OSError naming the inode quota), ci_session_put_file() with
 * CI_ETOOBIG. Each inode holds about 1 KiB of kernel memory while it
 * exists. No effect without a disk quota.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @inodes is under 64 or over
 *         4294967295.
 */
CI_API int ci_config_set_inode_quota(ci_config *cfg, ci_uint64 inodes);

/*
 * ci_config_set_cpu_limit - the CPU time a session's worker may use in
 * all, every thread of every cell counted, in seconds; default 0, no
 * limit. Each start of the worker (ci_session_new, ci_session_restart)
 * gets it anew. The kernel enforces it (RLIMIT_CPU, soft and hard, which
 * the worker sets on itself as it locks down, before any cell, and which
 * the host reads back from /proc/PID/limits; a cell cannot raise it): the
 * worker is killed when its CPU time reaches the limit, and the run that
 * was going on ends with CI_STATUS_KILLED and the error name
 * "CPULimitExceeded". The kernel counts whole seconds from the worker's
 * start, and the start's own CPU time (milliseconds for a worker forked
 * from the zygote, about a second by exec) is rounded up to the next
 * second on top of @seconds, so the cells get at least @seconds and less
 * than @seconds + 1. Between cells the worker is stopped and uses none
 * (ci_run_ex), so the budget is spent by cells alone. When the limit
 * cannot be set, the session does not start (CI_ESPAWN).
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @seconds is over a year
 *         (31536000).
 */
CI_API int ci_config_set_cpu_limit(ci_config *cfg, unsigned long seconds);

/*
 * ci_config_set_workspace_root - the directory under which each session
 * creates its private directory; default $TMPDIR, else /tmp. The string
 * is copied. Each session resolves it (realpath(3)) when it starts, and
 * names its directory by that path, inside the worker and out
 * (ci_session_workspace); a resolved path longer than 3000 bytes fails
 * the start with CI_EIO, and one inside a directory the worker binds from
 * the host (/usr) with CI_ESPAWN. So does (CI_EIO) a root that another
 * user could write without the sticky bit, or one beneath a directory
 * that is neither root's nor ours: such a user could swap a session
 * directory for their own. When the host runs as root its workers run as uid 65534
 * (see CI_SANDBOX_UNPRIVILEGED), which must be able to search every
 * directory down to @dir (as /tmp allows); if it cannot, or if the host's
 * user namespace does not map uid 65534 (a container that maps only
 * root), the worker does not start (CI_ESPAWN, and the message says so).
 * @return CI_OK; CI_EINVAL if an argument is NULL, @dir is empty, not
 *         absolute or longer than 3000 bytes; CI_ENOMEM.
 */
CI_API int ci_config_set_workspace_root(ci_config *cfg, const char *dir);

/*
 * ci_config_set_preload - the Python modules a worker imports before it
 * is ready, so a cell finds them loaded: a comma-separated list of module
 * names such as "numpy,pandas,scipy.stats" (identifiers as the Python
 * language reference defines them, ASCII only, joined by dots; no
 * spaces); default "numpy,pandas,matplotlib.pyplot". matplotlib
 * and matplotlib.pyplot are imported whatever the list says, since
 * figures come back as outputs through them. A module that fails to
 * import makes ci_session_new() fail with CI_ESPAWN, its traceback in
 * the message. The string is copied; each distinct list gets its own
 * zygote (ci_config_set_zygote). A zygote with the default list also
 * imports what it can of statsmodels.api, sklearn, seaborn and sympy
 * (installed, and listed by the package manifest if there is one), whose
 * first imports cost over 150 ms each: the first session of a process
 * pays for them once, and each session shares their pages, counted in its
 * address space (docs/benchmark.md); a worker started by exec does not.
 * @return CI_OK; CI_EINVAL if an argument is NULL or @modules is empty,
 *         malformed or over 1024 bytes; CI_ENOMEM.
 */
CI_API int ci_config_set_preload(ci_config *cfg, const char *modules);

/*
 * ci_config_set_zygote - whether workers are forked from a zygote
 * (@enabled 1, the default) or each started by fork + exec (0).
 *
 * The zygote is a worker warmed once per process and per preload list:
 * CPython started and the preload list imported, then it only forks. Its
 * children are ready in milliseconds instead of most of a second, and
 * share the pages of the imports until they write them. Each child then
 * takes its session's workspace, limits, namespaces, Landlock domain and
 * seccomp filter exactly as a worker started by exec does, before it
 * reads a cell; the zygote holds no session's data, and a session never
 * depends on it staying alive (a zygote found dead is replaced, and the
 * start that found it retried once). Up to two children wait ready, their
 * namespaces made and their new root entered; each gets its session
 * directory as a copy the zygote makes with open_tree(2) (Linux 5.2) in a
 * user and mount namespace of its own, where it keeps CAP_SYS_ADMIN and no
 * other capability. What forking shares, and what it
 * does not, is in SECURITY.md: chiefly, sessions of one zygote share its
 * address layout (ASLR), glibc's stack canary and CPython's hash seed.
 * The first session of a process pays the zygote's start (about 0.8 s).
 * The zygote is the process's child, like the workers; it exits with the
 * process. Sessions started from several threads take turns at the
 * zygote's lock for about a millisecond each. The setting is read by
 * ci_session_new() and ci_session_restart().
 *
 * A worker started by exec gets the same layers but two: it has no PID
 * namespace (CI_SANDBOX_PIDNS), and for a root host its network, IPC, UTS
 * and mount namespaces belong to the initial user namespace even where
 * the kernel refuses user namespaces, while the children of a zygote,
 * which leaves root before it imports anything, only have namespaces
 * where user namespaces are allowed. ci_session_sandbox() tells which
 * layers a session got; a config that requires CI_SANDBOX_PIDNS with the
 * zygote off fails at once with CI_ESANDBOX. $CODEINTERP_WORKER (a worker
 * program to run, for tests) turns the zygote off.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @enabled is not 0 or 1.
 */
CI_API int ci_config_set_zygote(ci_config *cfg, int enabled);

/*
 * ci_config_set_rollback - whether a cell that kills the worker leaves
 * the session as it was just before that cell (@enabled 1) or dead until
 * ci_session_restart() (0, the default).
 *
 * With it on, before each cell the worker forks a checkpoint: a copy of
 * itself that shares every page with it until one of them writes it
 * (copy on write), and only waits. A cell that kills the worker (its
 * grace period ran out, a crash in an extension, a sandbox violation, the
 * memory limit in C code, os._exit()) still returns CI_STATUS_KILLED with
 * its error as without rollback, and ci_result_rolled_back() is 1: the
 * checkpoint has taken the worker's place, with every variable, import
 * and history as the cell found them, so the next ci_run() works at
 * once. Cells that end otherwise (OK, an exception, a timeout or an
 * interrupt that the cell obeyed) kill their checkpoint unused. Files the
 * killed cell wrote stay in the workspace as it left them (copy on write
 * covers memory, not files). Threads a cell left running are not in the
 * checkpoint (fork(2) copies one thread), nor are the killed cell's
 * outputs. The next cell's execution count is the killed cell's plus one.
 *
 * The checkpoint's fork is a clone(2) that the seccomp filter sends to
 * the host (SECCOMP_RET_USER_NOTIF, seccomp_unotify(2)); the library lets
 * it through only from the worker's main thread at the moment it asked
 * for a checkpoint, and refuses every other fork with EPERM, so no cell
 * can make a process (docs/rollback.md). In the namespace the worker is
 * then pid 2 under a small reaper, pid 1, which outlives it; the
 * checkpoint has every layer and limit of the worker (its own memory
 * limit, as a process of its own; the task limit counts it). It needs the
 * PID namespace (a zygote's child, CI_SANDBOX_PIDNS), pidfd_getfd(2)
 * (Linux 5.6) and a host that may use it on its worker (same uid, or
 * root); where it cannot be had the session starts without it and
 * ci_session_rollback_active() says 0. Costs: the fork's copy of the page
 * tables and the pages the cell then writes, about 10 ms added to each
 * cell's round trip on a 2-vCPU machine for a worker of the default
 * preload list holding 100 MB (make bench row 10; docs/rollback.md), and
 * two more descriptors in the host for each session. Read by
 * ci_session_new() and ci_session_restart().
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @enabled is not 0 or 1.
 */
CI_API int ci_config_set_rollback(ci_config *cfg, int enabled);

/*
 * ci_config_set_manifest - limit the worker to the Python packages a
 * signed package manifest lists, and check them before any cell runs.
 *
 * @manifest_path names a manifest that codeinterp-manifest(1) made and
 * signed (JSON: the allowed distributions, the standard library among
 * them, and every file of each with its SHA-256; an Ed25519 signature
 * over its canonical bytes; docs/manifest-format.md specifies the format
 * and every refusal). @public_key_path names the public key that must
 * have signed it (the NAME.pub of "codeinterp-manifest keygen NAME").
 * Both paths are copied, and both files are read by
 * ci_session_new() and ci_session_restart(), not here. A NULL
 * @manifest_path turns the manifest off again (@public_key_path is then
 * ignored); without one, nothing below applies.
 *
 * With a manifest, each session start:
 *  - verifies the signature before any worker starts (again only when
 *    the manifest file or the key changed: a verified manifest is kept
 *    while the file's device, inode, size and times stay the same);
 *  - has the zygote (or a worker started by exec) hash every listed
 *    file before CPython starts, once per zygote, not per session, and
 *    refuse extra files where only listed files may be (a .pth file in
 *    the search path, a module added to a listed package);
 *  - gives the worker exactly the manifest's module search path, without
 *    the site module (no .pth file or sitecustomize runs), an import
 *    hook that fails an unlisted module with ModuleNotFoundError ("No
 *    module named 'x': the signed package manifest does not list it"),
 *    and Landlock read rules derived from the list, so a cell cannot
 *    open a file of an unlisted package of the search path even by its
 *    path (Python files elsewhere under /usr, such as another
 *    application's bundled libraries, stay readable: SECURITY.md). The
 *    manifest therefore needs Landlock (CI_SANDBOX_LANDLOCK).
 * Any failure makes ci_session_new() and ci_session_restart() return
 * CI_EMANIFEST with a message that names the cause: the file cannot be
 * read or is malformed (and where), it is not signed, the signature is
 * malformed, it was signed by another key (both key ids are given), the
 * signature does not match (changed after signing), a distribution or a
 * path is listed twice, a listed file changed or is missing (its path),
 * an unlisted file is present (its path), or the kernel has no Landlock.
 * A session that starts with a manifest set enforces it: there is no
 * partial mode, and no layer of it is best effort.
 * The files are checked when a zygote starts (or a worker by exec), and
 * a Python module's source and bytecode again as an import reads them (a
 * module changed since raises ImportError); an extension module or data
 * file changed later is seen by the next zygote, not by the sessions of
 * a running one. The manifest must list the distributions of the preload
 * list (ci_config_set_preload) and matplotlib's.
 * SECURITY.md states what the signature proves and what it does not.
 * A distinct manifest gets its own zygote.
 * @return CI_OK; CI_EINVAL if @cfg is NULL, a path is empty or over 4096
 *         bytes, or @public_key_path is NULL with a @manifest_path;
 *         CI_ENOMEM.
 */
CI_API int ci_config_set_manifest(ci_config *cfg, const char *manifest_path,
                                  const char *public_key_path);

/*
 * ci_config_set_manifest_key - ci_config_set_manifest() with the public
 * key given as its 32 bytes (an Ed25519 public key, as libsodium's
 * crypto_sign_PUBLICKEYBYTES) instead of a file: the base64 after the
 * "codeinterp-manifest-public-key " prefix of a NAME.pub file, decoded.
 * The bytes are copied.
 * @return CI_OK; CI_EINVAL if @cfg, @manifest_path or @public_key is
 *         NULL, the path is empty or over 4096 bytes, or @key_len is not
 *         32; CI_ENOMEM.
 */
CI_API int ci_config_set_manifest_key(ci_config *cfg, const char *manifest_path,
                                      const unsigned char *public_key, size_t key_len);

/*
 * ci_config_set_wheelhouse - let cells install packages an operator
 * approved: the wheel files (PEP 427) of the directory @dir that the
 * session's signed package manifest lists, each with its SHA-256
 * ("codeinterp-manifest create ... --wheelhouse DIR" lists them).
 *
 * In a cell, "%pip install NAME[==VERSION]", "!pip install NAME" and
 * pip.main(["install", NAME]) then install NAME and what it requires,
 * from listed wheels only, into the session's own site directory
 * (<session>/site: read-only to the cell, not noexec, so a compiled
 * extension loads; gone with the session, kept by ci_session_restart);
 * the import works in the next line. The host reads each wheel into
 * memory, checks its SHA-256 against the manifest, and unpacks it itself
 * (libarchive), refusing an entry that is not a plain file or directory,
 * that leaves the site directory, or that would replace a file already
 * there; nothing of a wheel is ever run to install it, and no byte comes
 * from a network. A wheel that is not listed, or whose bytes differ from
 * the listed hash, is refused; so is one that would shadow a distribution
 * or top-level module of the manifest. What is installed counts against
 * the session's disk quota. docs/wheelhouse.md has the details.
 * "%pip list", "%pip show NAME" and "%pip freeze" work with or without a
 * wheelhouse; without one, "%pip install" says installation is not
 * enabled and lists what is installed.
 *
 * @dir is copied; it is opened by each install, not here. NULL turns the
 * wheelhouse off. A session whose config has a wheelhouse but no
 * manifest (ci_config_set_manifest) is refused by ci_session_new() and
 * ci_session_restart() with CI_EMANIFEST; so is one whose @dir is not a
 * directory, and one whose manifest lists no wheels.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or @dir is empty or over 4096
 *         bytes; CI_ENOMEM.
 */
CI_API int ci_config_set_wheelhouse(ci_config *cfg, const char *dir);

/* ----------------------------------------------------------- audit trail */

/*
 * The audit trail: the host records each event of each session started
 * from a config, one JSON object a line: a session's start (its sandbox
 * layers, the config's limits, the manifest's id) and end, each cell
 * (before it is sent, and after: its SHA-256 and size, status, times,
 * peak memory, changed files), each file put or got, each host-function
 * call, each HTTP request made through the host, each refusal (a system
 * call the seccomp filter killed the worker for, and those the worker
 * reports the cell met and survived), restarts and kills.
 * Every line carries a sequence number, a UTC time, the session's id and
 * the SHA-256 of the line before it, so a removed, edited or reordered
 * line is detectable: `codeinterp-audit verify FILE` checks a log. The
 * schema is docs/audit-log.md and codeinterp-audit(1).
 *
 * Fails closed: a session whose start the log cannot record does not
 * start (ci_session_new: CI_EIO); a cell whose start it cannot record is
 * not run (ci_run: CI_EIO); after any other event the log could not
 * record, the session's ci_run, ci_session_put_file and
 * ci_session_get_file return CI_EIO without doing anything until
 * ci_session_restart() records its own event.
 */

/*
 * ci_event_fn - receives each audit event of the config's sessions.
 * @line:    the event's JSON line, exactly as the log file gets it, without
 *           its newline; NUL-terminated after @len bytes. Borrowed: valid
 *           during the call only.
 * @len:     its length in bytes.
 * @payload: as given to ci_config_set_event_fn().
 * @return 0 if the event was taken; any other value counts as a failed
 *         write (see above).
 * Called on the thread of the call that made the event (ci_session_new,
 * ci_run and the others), one event at a time in the log's order, under
 * the log's lock: it must not start, run or free a session of the same
 * log, or it deadlocks.
 */
typedef int (*ci_event_fn)(const char *line, size_t len, void *payload);

/*
 * ci_config_set_audit_log - appends the config's sessions' events to the
 * file @path. The file is opened (O_APPEND | O_CREAT, mode 0600 when
 * created) at the first session's start and held open by the config and
 * every session started from it or from a copy, until the last of them is
 * freed; a path set later does not move them. Several sessions, threads and
 * processes may append to one file: each line is one write(2) under
 * flock(2), and continues the chain from the file's last line, which must
 * be a whole audit event (else no session starts). Lines are written
 * without buffering, not fsync()ed. The worker never sees the file;
 * it must not be inside a workspace root.
 * @path: copied; NULL stops the file (the callback stays).
 * @return CI_OK; CI_EINVAL if @cfg is NULL, @path is empty or over 4096
 *         bytes; CI_ENOMEM. A file that cannot be opened, locked, read or
 *         written makes ci_session_new() fail with CI_EIO, its message
 *         naming the file and why.
 */
CI_API int ci_config_set_audit_log(ci_config *cfg, const char *path);

/*
 * ci_config_set_event_fn - also passes each event's line to @fn, for a
 * host that ships them elsewhere; with a log file too, the line goes to
 * the file first. Without a file the chain is kept in memory, starting
 * at seq 1 with each call of this function or of ci_config_set_audit_log.
 * @fn: NULL stops the callback (the file stays).
 * @return CI_OK; CI_EINVAL if @cfg is NULL; CI_ENOMEM.
 */
CI_API int ci_config_set_event_fn(ci_config *cfg, ci_event_fn fn, void *payload);

/* -------------------------------------------------------- host functions */

/*
 * Host functions give a cell the agent's tools and data without their
 * credentials: a cell calls `sales = query_sales(region="EMEA")`, the
 * call crosses the worker's channel (the worker has no network), and the
 * host runs its own function and hands the value back. The arguments and
 * the value travel as JSON.
 */

/* The answer a host function gives, through ci_reply_json() or
 * ci_reply_error(); valid only during the ci_function_fn call it is given
 * to. */
typedef struct ci_reply ci_reply;

/*
 * ci_function_fn - runs a host function for a cell.
 * @payload:   the pointer given to ci_config_add_function().
 * @name:      the function's name, NUL-terminated.
 * @args_json: the call's arguments, @args_len bytes of JSON (RFC 8259,
 *             UTF-8; NUL-terminated after them, though a string in it may
 *             hold an escaped NUL), always an object of exactly two members:
 *             {"args": [...], "kwargs": {...}}, the positional arguments and
 *             the keyword arguments, each a value of JSON (null, true,
 *             false, a number, a string, an array, an object), encoded
 *             compactly in the order the cell gave them
 *             (`f(1, "x", region="EMEA")` gives
 *             {"args":[1,"x"],"kwargs":{"region":"EMEA"}}). The library
 *             has checked that it is that, and at most the argument limit
 *             (ci_config_set_call_limits); it is the cell's text all the
 *             same, as untrusted as the cell. Borrowed for the call.
 * @reply:     where to answer: ci_reply_json() with the value, or
 *             ci_reply_error() with an exception. One answer: a second one
 *             is refused. With none (or only refused ones) the cell's call
 *             raises HostFunctionError saying so.
 *
 * Called on the thread inside ci_run(), ci_run_stream() or ci_run_ex() on
 * the session whose cell made the call, one call at a time (calls from
 * several of the cell's threads wait for each other). The cell waits
 * meanwhile and its timeout runs on: the run cannot end while the callback
 * runs, so one that blocks holds the run past its timeout. When it returns
 * after the timeout, or after ci_session_interrupt() (which it may call,
 * from any thread), its answer is dropped and the cell is interrupted at
 * once (CI_STATUS_TIMEOUT, CI_STATUS_INTERRUPTED); once the cell is
 * interrupted, no host function is called again in that run. It may use
 * other sessions, and call ci_reply_json(), ci_reply_error(),
 * ci_session_interrupt() and ci_session_errmsg() on its own; any other
 * call on the same session (ci_run() and ci_session_restart() return
 * CI_EBUSY; ci_session_free() is undefined behaviour) is not allowed.
 */
typedef void (*ci_function_fn)(void *payload, const char *name, const char *args_json,
                               size_t args_len, ci_reply *reply);

/*
 * ci_config_add_function - defines a host function that the cells of
 * sessions made with @cfg can call: a builtin named @name, also
 * importable (`from codeinterp_host import query_sales`), whose call runs
 * @fn on the host (ci_function_fn). Its arguments must be JSON values
 * (None, bool, int of at most 64 bits, a finite float, str, list, tuple,
 * dict with str keys): anything else (NaN, bytes, a DataFrame, a numpy
 * number) raises TypeError in the cell, naming what JSON allows, and
 * arguments over the argument limit raise ValueError, before the host is
 * asked. The call returns the parsed JSON value of ci_reply_json() (an
 * array is a list, an object a dict); ci_reply_error() makes it raise the
 * builtin exception of that name when there is one that derives from
 * Exception (ValueError, KeyError...), else HostFunctionError (importable
 * from codeinterp_host; its attributes: function, exception_name and
 * message). The functions live as long as the session, across
 * ci_session_restart(), with the zygote or without it; a worker learns
 * their names over its channel before its first cell.
 * @name:        an ASCII Python identifier of at most 64 bytes, not a
 *               keyword, not one of Python's builtins or of those the
 *               runner adds (display, get_ipython, In, Out,
 *               HostFunctionError), not starting with '_', not defined on
 *               @cfg already. Copied.
 * @description: its docstring (`help(query_sales)` shows it), UTF-8 of at
 *               most 65536 bytes; NULL or "" for none. Copied.
 * @fn:          the callback; not NULL.
 * @payload:     given to @fn as it is; the caller keeps it alive as long
 *               as any session made with @cfg, or a copy of it, lives.
 * At most 256 functions a config. Not thread-safe on one @cfg; the message
 * of a failure is ci_session_errmsg(NULL)'s, on this thread.
 * @return CI_OK; CI_EINVAL if @cfg, @name or @fn is NULL, @name is refused
 *         or defined already, or @description is not UTF-8; CI_ETOOBIG
 *         if @cfg has 256 functions or @description is over 65536 bytes;
 *         CI_ENOMEM.
 */
CI_API int ci_config_add_function(ci_config *cfg, const char *name, const char *description,
                                  ci_function_fn fn, void *payload);

/*
 * ci_config_set_call_limits - caps what a host function call moves: the
 * JSON of a call's arguments (@args_bytes; a cell's call over it raises
 * ValueError before the host is asked) and of a function's value
 * (@result_bytes; ci_reply_json() refuses a longer one with CI_ETOOBIG,
 * and the cell's call then raises HostFunctionError saying so). In
 * bytes; the defaults are 1048576 (1 MiB) each. The host also needs
 * memory for a tree of the arguments while it checks them: about 20
 * times @args_bytes for an array of numbers, 80 for one of empty objects,
 * the worst a cell can send (jansson 2.14), so some 80 MiB at the
 * default and 5 GiB at the maximum.
 * @return CI_OK; CI_EINVAL if @cfg is NULL or a limit is under 1024 or
 *         over 67108864 (64 MiB).
 */
CI_API int ci_config_set_call_limits(ci_config *cfg, size_t args_bytes, size_t result_bytes);

/*
 * ci_reply_json - answers a host function's call with a value: @len bytes
 * of JSON at @json (RFC 8259, UTF-8, any value; not NUL-terminated, an
 * integer within 64 bits), which the library checks and copies. The
 * cell's call returns it parsed.
 * @reply: the ci_function_fn's; only during that call.
 * @return CI_OK; CI_EINVAL if @reply or @json is NULL, @reply is answered
 *         already, or @json is not JSON (ci_session_errmsg() of the session
 *         says where; the cell is told only that it was not JSON);
 *         CI_ETOOBIG if @len is over the result limit
 *         (ci_config_set_call_limits); CI_ENOMEM. On a refusal the reply is
 *         still unanswered, and may be answered otherwise.
 */
CI_API int ci_reply_json(ci_reply *reply, const char *json, size_t len);

/*
 * ci_reply_error - answers a host function's call with an exception: the
 * cell's call raises @exception_name's builtin exception type, with
 * @message as its argument, when it names one that derives from Exception
 * ("ValueError", "PermissionError"), else HostFunctionError carrying the
 * name and the message. Both are copied.
 * @exception_name: identifiers joined by dots ("HTTPError",
 *                  "requests.HTTPError"), at most 128 bytes.
 * @message:        UTF-8 of at most 65536 bytes; NULL for none. It reaches
 *                  the cell (and the model): put no secret in it.
 * @return CI_OK; CI_EINVAL if @reply or @exception_name is NULL, @reply is
 *         answered already, @exception_name is malformed or @message is
 *         not UTF-8; CI_ETOOBIG if @message is over 65536 bytes;
 *         CI_ENOMEM.
 */
CI_API int ci_reply_error(ci_reply *reply, const char *exception_name, const char *message);

/* ---------------------------------------------------------- HTTP by URL */

/*
 * The worker has no network stack. A host may still let cells fetch
 * chosen URLs: with at least one prefix allowed, http.client,
 * urllib.request, requests and what uses them (pandas.read_csv(url))
 * work in a cell for the URLs under an allowed prefix, each request
 * carried over the worker's channel and made by the host with libcurl.
 * docs/network.md tells what the host checks; SECURITY.md what crosses.
 */

/*
 * ci_config_allow_url - lets the cells of sessions made with @cfg fetch
 * the URLs under @prefix: an absolute http or https URL, whose scheme,
 * host and port a URL must have and whose path its path must start with
 * ("https://api.example.com/v1/" allows https://api.example.com/v1/rates
 * but not /v2/ nor http://; a prefix's path matches whole segments, so
 * "https://api.example.com/v1" allows /v1 and /v1/rates, never /v1beta).
 * The host resolves names itself and refuses a connection to a
 * loopback, link-local, private or reserved address unless the prefix
 * names that address literally ("http://127.0.0.1:8080/",
 * "http://[::1]/", or "localhost" for loopback). Every other URL, a
 * redirect's too (the cell's client follows it with a new request, checked
 * as the first), fails in the cell with a PermissionError naming the
 * policy and the allowed prefixes. With no prefix allowed (the default) a
 * cell has no network at all. Each request is made on the thread inside
 * ci_run(), ci_run_stream() or ci_run_ex() while the cell waits, within
 * the URL limits (ci_config_set_url_limits) and never past the cell's
 * timeout; ci_session_interrupt() ends it at once. The library changes no
 * signal disposition (SIGPIPE is blocked on that thread alone during a
 * request). Copied; allowing a prefix twice is a no-op.
 * Not thread-safe on one @cfg; a failure's message is
 * ci_session_errmsg(NULL)'s, on this thread.
 * @return CI_OK; CI_EINVAL if @cfg or @prefix is NULL, or @prefix is not
 *         an http or https URL, has userinfo, a query, a fragment, a
 *         space or a control character, or is over 8192 bytes;
 *         CI_ETOOBIG past 256 prefixes; CI_ENOMEM.
 */
CI_API int ci_config_allow_url(ci_config *cfg, const char *prefix);

/*
 * ci_config_set_url_header - adds @header ("Authorization: Bearer ...")
 * to every request the host makes under @prefix, in place of any header
 * of that name the cell wrote. The cell never sees it: it is not in the
 * worker, and a response header of that name, or one that shows its
 * value, is kept from the cell; the prefix's bodies are asked for
 * unencoded, and a body that is encoded or holds the value, in any case,
 * (a server echoing its requests) fails the request (docs/network.md).
 * Copied; a prefix takes at most 32 headers.
 * @prefix: exactly as given to ci_config_allow_url() before.
 * @header: one "Name: value" line, a token before the colon, at most 8192
 *          bytes, without CR, LF, NUL or other control characters but tab.
 * Not thread-safe on one @cfg.
 * @return CI_OK; CI_EINVAL if an argument is NULL, @prefix is not allowed
 *         on @cfg, or @header is malformed; CI_ETOOBIG past 32 headers;
 *         CI_ENOMEM.
 */
CI_API int ci_config_set_url_header(ci_config *cfg, const char *prefix, const char *header);

/*
 * ci_config_set_url_limits - caps one request a cell makes by URL: its
 * body (@request_bytes; a larger one raises ValueError in the cell before
 * the host is asked), the body of its response (@response_bytes; a larger
 * one fails the request with an error naming the limit) and its time
 * (@timeout_ms, from the start of the connection to the end of the body;
 * never past the cell's own timeout). The defaults: 16777216 bytes (16 MiB)
 * each, 30000 ms. The host holds a response in memory until the worker
 * has it.
 * @return CI_OK; CI_EINVAL if @cfg is NULL, a size is 0 or over 268435456
 *         (256 MiB), or @timeout_ms is 0 or over 3600000.
 */
CI_API int ci_config_set_url_limits(ci_config *cfg, size_t request_bytes, size_t response_bytes,
                                    unsigned long timeout_ms);

/* --------------------------------------------------------------- session */

/*
 * ci_session_new - starts a session: a private directory
 * (<root>/codeinterp-XXXXXX, the host's, mode 0700, or 0710 with group
 * 65534 when the host runs as root and its subdirectories belong to uid
 * and gid 65534) whose
 * "workspace"
 * subdirectory is the cell's working directory, and a worker process that embeds
 * CPython with numpy, pandas and matplotlib loaded, then locks itself
 * down (see docs/sandbox.md and SECURITY.md) before it reads any cell.
 *
 * The worker is forked from the zygote for the config's preload list
 * (ci_config_set_zygote), which the process's first such session starts;
 * with the zygote off, or $CODEINTERP_WORKER set, it is started with
 * fork + exec of codeinterp-worker, found at $CODEINTERP_WORKER when set,
 * else at the path fixed at build time. Either way it is the host's child:
 * the zygote is forked (and forks with clone(2) CLONE_PARENT) on a
 * library-owned thread that lives as long as the process, so that the
 * worker's parent-death signal (prctl(2) PR_SET_PDEATHSIG) is tied to the
 * process and not to the calling thread. The worker gets a fixed minimal
 * environment: none of the host's variables and none of its descriptors
 * pass to it. The library reaps its own workers, zygotes and their spare
 * children with waitpid(2) and waitid(2); a host that reaps every child
 * (waitpid(-1) in a SIGCHLD handler) breaks status reporting.
 *
 * @out: receives the session, owned by the caller (ci_session_free).
 *       Set to NULL on failure.
 * @cfg: settings, copied; NULL means the defaults.
 * @return CI_OK; CI_EINVAL if @out is NULL; CI_ENOMEM; CI_EIO if the
 *         workspace cannot be created; CI_ESPAWN if the worker cannot be
 *         started or does not become ready within the startup timeout;
 *         CI_EPROTO if its first message is malformed; CI_ESANDBOX if a
 *         layer demanded by ci_config_require_sandbox() is missing (the
 *         message names it); CI_EIO also if the audit log
 *         (ci_config_set_audit_log) cannot record its start. The detail of a
 *         failure is kept per thread: ci_session_errmsg(NULL) returns it
 *         until the calling thread's next ci_session_new().
 * The session directory holds a "lock" file that the host keeps
 * flock(2)ed while the session lives. A host that died without
 * ci_session_free() left its directories behind with their locks free:
 * ci_session_new() removes those it finds under its root that belong to
 * the calling user (it looks at no more than 4096 entries of the root).
 * Blocks for the worker's start-up: a few milliseconds from a warm
 * zygote, about 0.8 s for the one that starts the zygote or without it
 * (2 cores).
 */
CI_API int ci_session_new(ci_session **out, const ci_config *cfg);

/*
 * ci_session_free - kills the worker (SIGKILL, then waitpid(2): a worker
 * still exiting after 50 ms is reaped by a detached thread of the
 * library, so this never waits on the kernel and leaves no zombie),
 * closes the session's descriptors and removes its directory with
 * everything a cell left in it, without following any link out of it.
 * NULL is a no-op. Results obtained from the session stay valid.
 */
CI_API void ci_session_free(ci_session *s);

/*
 * ci_session_restart - replaces the worker with a fresh one: empty
 * interpreter state, execution count back to 0, same workspace and
 * files. The worker's HOME (config/) and TMPDIR (tmp/) start empty again:
 * the new worker reads them before it locks itself down. Works on live
 * and dead sessions alike.
 * @return CI_OK; CI_EINVAL if @s is NULL; CI_EBUSY during a run;
 *         CI_EIO if config/ or tmp/ cannot be renewed; CI_ESPAWN,
 *         CI_EPROTO, CI_ESANDBOX, CI_ENOMEM as for ci_session_new(); on
 *         failure the session is dead and may be restarted again. CI_EIO
 *         also if the audit log cannot record the restart: the worker
 *         then lives but runs nothing until a restart is recorded.
 */
CI_API int ci_session_restart(ci_session *s);

/*
 * ci_session_errmsg - detail of the last failed call on @s, or of the
 * last cell that killed its worker; "" if none. Overwritten by the next
 * failed call on @s (a call that succeeds leaves it). Borrowed: valid
 * until the next call on @s.
 * @s: the session; NULL gives the detail of the calling thread's last
 *     failed ci_session_new() ("" if none).
 * @return never NULL.
 */
CI_API const char *ci_session_errmsg(const ci_session *s);

/*
 * ci_session_workspace - absolute path of the session's workspace, the
 * cell's working directory, by the same name inside the worker (the
 * workspace root resolved, ci_config_set_workspace_root). Borrowed: valid
 * until ci_session_free(@s).
 * @return NULL if @s is NULL.
 */
CI_API const char *ci_session_workspace(const ci_session *s);

/*
 * ci_session_sandbox - the CI_SANDBOX_* layers the session's current
 * worker applied; 0 if @s is NULL or the worker is dead.
 */
CI_API unsigned ci_session_sandbox(const ci_session *s);

/*
 * ci_session_pid - the worker's process id, as the host sees it (with
 * CI_SANDBOX_PIDNS a cell sees its own as 1).
 * @return a pid > 0; -1 if @s is NULL or the worker is dead (including
 *         one that died since the last run, not yet reaped).
 */
CI_API int ci_session_pid(const ci_session *s);

/*
 * ci_session_put_file - writes @len bytes of @data to the file @name in
 * the workspace, replacing any file of that name atomically (a
 * temporary file renamed into place, so a link a cell planted under that
 * name is replaced, never written through). The file has mode 0600 and
 * belongs to the worker's uid (65534 when the host runs as root), so the
 * cell can read and overwrite it.
 * @name: relative to the workspace; "/" separates existing
 *        subdirectories. Empty names, absolute paths, "." or ".."
 *        components and paths through symbolic links are refused.
 * @data: may be NULL only when @len is 0.
 * @return CI_OK; CI_EINVAL for a NULL or refused argument; CI_ETOOBIG if
 *         @len is over the file limit, or the file does not fit in the
 *         session's disk or inode quota (ci_config_set_disk_quota; the
 *         message names it, and nothing of the file is left); CI_ENOENT if a directory on the
 *         path is missing; CI_EUNSAFE if a path component is a link or
 *         not a directory; CI_EIO for other I/O failures (errmsg says),
 *         or when the audit log (ci_config_set_audit_log) could not record
 *         this put (the file is written) or an earlier event (nothing is
 *         written).
 * Works on a dead session too: the workspace outlives its worker.
 */
CI_API int ci_session_put_file(ci_session *s, const char *name,
                               const void *data, size_t len);

/*
 * ci_session_get_file - reads the whole file @name from the workspace.
 * Never follows a symbolic link (openat2(2) with RESOLVE_BENEATH and
 * RESOLVE_NO_SYMLINKS) and refuses files with more than one hard link,
 * since a cell may plant either to reach the host's files.
 * @data: receives a buffer owned by the caller, freed with ci_free();
 *        it holds *@len bytes plus a terminating NUL not counted in
 *        *@len. Set to NULL on failure.
 * @len:  receives the size in bytes; 0 on failure.
 * @return CI_OK; CI_EINVAL for a NULL or refused argument (see
 *         ci_session_put_file for the name rules); CI_ENOENT if there is
 *         no such file; CI_EUNSAFE for a link or a non-regular file;
 *         CI_ETOOBIG if it is over the file limit; CI_ENOMEM; CI_EIO, also
 *         when the audit log could not record this get or an earlier
 *         event (then nothing is handed out).
 */
CI_API int ci_session_get_file(ci_session *s, const char *name,
                               void **data, size_t *len);

/*
 * ci_session_get_file_max - ci_session_get_file() of a file of at most
 * @max bytes (the file limit if @max is larger): a larger file is
 * CI_ETOOBIG and nothing of it is read. For a host that has room for
 * less than the file limit (the MCP server's one message): the size is
 * checked on the descriptor the file is read from, so a cell that swaps
 * names cannot make the host read a bigger one. Returns and records in
 * the audit log as ci_session_get_file() does, but for CI_ETOOBIG *@len
 * receives the file's size (*@data is NULL).
 */
CI_API int ci_session_get_file_max(ci_session *s, const char *name, ci_uint64 max,
                                   void **data, size_t *len);

/* ci_free - frees memory the library handed to the caller; NULL is a no-op. */
CI_API void ci_free(void *p);

/*
 * ci_session_interrupt - stops the cell that is running on @s, as Jupyter's
 * "interrupt kernel" does: the cell gets a KeyboardInterrupt in its main
 * thread and its result has CI_STATUS_INTERRUPTED, with the interpreter
 * state kept. A cell that does not give way within the grace period
 * (ci_config_set_grace_ms) is killed as at a timeout: CI_STATUS_KILLED,
 * error name "KeyboardInterrupt". The running ci_run() returns as usual. Once
 * the interrupt is sent the status is CI_STATUS_INTERRUPTED however the
 * cell ends (it may catch KeyboardInterrupt, or raise its own).
 *
 * The one call that may overlap others on the same session: safe from any
 * thread while ci_run() runs, and from a signal handler (it only uses
 * lock-free atomics and write(2), which signal-safety(7) lists). It must
 * not overlap ci_session_free(@s). When no cell is running it does
 * nothing, and it never affects a cell that starts later.
 * @return 1 if a cell was running and is being interrupted; 0 if no cell
 *         was running; CI_EINVAL if @s is NULL.
 */
CI_API int ci_session_interrupt(ci_session *s);

/* ------------------------------------------------------------- snapshots */

/*
 * ci_session_snapshot - the session's state as one self-contained byte
 * string (docs/snapshot-format.md): the interpreter's (every variable the
 * cells made, functions, lambdas and classes defined in cells included;
 * the output history Out and _N, the input history In and _iN, the
 * execution count; the state of the random and numpy.random generators),
 * pickled with dill inside the sandboxed worker, and the workspace's
 * directories and regular files, which the host reads itself. Imports
 * are carried as their names: restore imports them again. What cannot be
 * carried is left out and named in the snapshot's list (ci_snapshot_left_out):
 * a generator or coroutine in flight, an open file, socket, thread or
 * memory map (by the variable that holds one, however deep), anything
 * pickle refuses, a symbolic link, a special file, a file with more than
 * one hard link or over the file limit, a directory deeper than 64.
 * Open figures that no variable names are not carried.
 * Runs as a cell would, between cells: the session's timeout, grace
 * period and ci_session_interrupt() bound it, and pickling runs the
 * objects' own code (__reduce__) in the sandbox, but never reaches the
 * host: a host function, an allowed URL, %pip install or input() raises
 * RuntimeError there (the object is then left out); the state is at most the
 * memory limit (ci_config_set_memory_limit) and the files the disk and
 * inode quotas. The session goes on unchanged.
 * @data: receives the bytes, the caller's (ci_free); NULL on failure.
 * @len: receives their count; 0 on failure.
 * @return CI_OK; CI_EINVAL if an argument is NULL; CI_EBUSY during a run;
 *         CI_EDEAD if the worker is dead, or died or was killed while it
 *         pickled (the session then needs ci_session_restart); CI_ENOMEM
 *         (also a MemoryError in the worker); CI_ETOOBIG if the files are
 *         over what a snapshot carries (the message says which cap); CI_EIO
 *         if pickling failed otherwise, was interrupted, or the audit log
 *         failed (ci_session_errmsg says which).
 * Not thread-safe with other calls on @s but ci_session_interrupt().
 */
CI_API int ci_session_snapshot(ci_session *s, void **data, size_t *len);

/*
 * ci_session_restore - starts a new session (as ci_session_new(@cfg))
 * from a snapshot of ci_session_snapshot(), taken on this machine or
 * another with the same package set: its files are written into the new
 * workspace (mode 0600, or 0700 where the owner could execute; directories
 * 0700) and its interpreter state loaded by the new worker, sandboxed as
 * for a cell and within a cell's timeout; the execution count goes on
 * from the snapshot's. The bytes are taken as hostile: the whole of
 * @data is checked (format, SHA-256, every length and path; only the
 * caller's @len bytes are read) before any session starts, and only the
 * locked-down worker unpickles the state, so a forged snapshot can do
 * what a cell can and no more: less, since loading it calls none of
 * @cfg's host functions or allowed URLs (they raise RuntimeError there).
 * @out: receives the session (ci_session_free); NULL on failure.
 * @cfg: as for ci_session_new(); NULL means the defaults.
 * @data, @len: the snapshot; not kept.
 * @return CI_OK; CI_EINVAL if @out or @data is NULL, the bytes are no
 *         snapshot this library reads (cut, changed, forged: the
 *         message says what is wrong), the snapshot was taken with
 *         another package set (the message names the differences), or
 *         its state does not load (the message has the exception);
 *         CI_ETOOBIG if its state is over @cfg's memory limit, or its files
 *         over the file limit, disk or inode quota; CI_ENOMEM if the
 *         worker ran out of memory loading it (a state needs about three
 *         times its size within the memory limit); CI_EDEAD if the new
 *         worker died loading it; CI_EIO if loading it timed out; any code
 *         of ci_session_new(). The detail of a failure is
 *         ci_session_errmsg(NULL)'s, as for ci_session_new().
 * Thread-safe, as ci_session_new(): blocks for the start and the load.
 */
CI_API int ci_session_restore(ci_session **out, const ci_config *cfg, const void *data,
                              size_t len);

/*
 * ci_session_fork - a new session whose state is a copy of @s's, between
 * cells: every variable, import, function, class, the histories, the
 * execution count and the generators' states, as ci_session_snapshot()
 * carries them, and its own copy of the workspace's files, with its own
 * worker, workspace, every sandbox layer and limit of @s's config
 * (ci_session_sandbox() reports the same bits when the kernel gives
 * them). What either session does afterwards is invisible to the other;
 * each is freed or restarted on its own, in any order. Today the copy is
 * a snapshot restored at once, so @s is busy for the snapshot (about half
 * a second for 100 MB of DataFrame on 2 vCPUs), and what a snapshot cannot
 * carry (a generator in flight, an open file...) is missing from the
 * branch and named by ci_session_left_out() of it.
 * @out: receives the branch (ci_session_free); NULL on failure.
 * @return CI_OK; CI_EINVAL if an argument is NULL; CI_EBUSY during a run;
 *         CI_EDEAD on a dead session; CI_ETOOBIG, CI_ENOMEM, CI_EIO as for
 *         ci_session_snapshot(); any code of ci_session_restore() for the
 *         branch's start (a quota, the host's limits). ci_session_errmsg(@s)
 *         says why.
 * Not thread-safe with other calls on @s but ci_session_interrupt().
 */
CI_API int ci_session_fork(ci_session *s, ci_session **out);

/*
 * ci_session_left_out - what the snapshot @s was started from
 * (ci_session_restore, ci_session_fork) could not carry, as
 * ci_snapshot_left_out() gives it; "" for any other session, and after
 * ci_session_restart(). Borrowed: valid until ci_session_restart() or
 * ci_session_free() of @s. Never NULL ("" for a NULL @s). Safe with any
 * call on @s but those two, which free the string.
 */
CI_API const char *ci_session_left_out(const ci_session *s);

/*
 * ci_session_rollback_active - 1 if a cell that kills @s's worker will be
 * rolled back (ci_config_set_rollback is on and the kernel and the host
 * allow it: the worker has a PID namespace and the host holds its
 * seccomp listener), else 0; 0 for NULL or a dead session.
 * Thread-safe with ci_run() on @s.
 */
CI_API int ci_session_rollback_active(const ci_session *s);

/*
 * ci_snapshot_left_out - what a snapshot could not carry: one line per
 * item, "name: reason" (a variable's name, "Out[N]", or a workspace path
 * in which each byte that is not printable ASCII reads as '?'), then
 * "... and N more files" if the list was cut at 1 MiB; "" when all was
 * carried. Checks @data as ci_session_restore() does.
 * @list: receives a NUL-terminated string, the caller's (ci_free); NULL
 *        on failure.
 * @return CI_OK; CI_EINVAL if an argument is NULL or the bytes are no
 *         snapshot (ci_session_errmsg(NULL) says why); CI_ENOMEM.
 * Thread-safe.
 */
CI_API int ci_snapshot_left_out(const void *data, size_t len, char **list);

/* ------------------------------------------------------------------- run */

/*
 * ci_run - runs one cell in the session's interpreter, as a notebook
 * would: the state is kept between cells, and if the cell ends with an
 * expression (not followed by a semicolon) its repr is the value.
 * Blocks until the cell ends or the limits end it: it returns within
 * timeout + grace + 100 ms in every case, whatever the worker does (only
 * the host's own ci_run_options.on_input, while it runs, can hold it
 * longer). There is no keyboard: a cell's input() and getpass.getpass()
 * raise IPython's StdinNotImplementedError at once, with a message that
 * tells the cell to put the value in its code, unless ci_run_ex() is
 * given on_input to answer them (a cell that set sys.stdin to a file of
 * its own, io.StringIO say, reads input() from it, as in Python).
 *
 * Between cells the worker is stopped (SIGSTOP, every thread; SIGCONT as
 * the next cell is sent), so a thread a cell leaves running, or a timer,
 * runs on only while later cells run and uses no CPU in between; what it
 * prints then is part of the running cell's output. The host process gets
 * a SIGCHLD for each stop and continue of a worker (as for any child,
 * unless its handler has SA_NOCLDSTOP); the library waits for no stopped
 * child, so a host that reaps its own children with WUNTRACED sees them.
 *
 * @code: UTF-8 source, NUL-terminated, at most 16 MiB.
 * @out:  receives the result, owned by the caller (ci_result_free); set
 *        to NULL when the return code is not CI_OK.
 * @return CI_OK whenever the cell was handed to the worker, whatever
 *         became of it (the status says); CI_EINVAL for NULL arguments;
 *         CI_ETOOBIG for a cell over 16 MiB; CI_EDEAD if the worker is
 *         known to be dead (a run killed it, or a restart failed; a worker
 *         that died between runs is reported by the next run instead:
 *         CI_OK, CI_STATUS_KILLED and how it died); CI_EBUSY if a run
 *         is in progress; CI_ENOMEM; CI_EIO if the audit log
 *         (ci_config_set_audit_log) cannot record the cell's start, or
 *         could not record an earlier event of the session: the cell is
 *         not run. A cell whose end the log cannot record still returns
 *         CI_OK and its result; the next call says CI_EIO.
 */
CI_API int ci_run(ci_session *s, const char *code, ci_result **out);

/*
 * Streams of a cell's output, as Jupyter's "stream" messages name them.
 */
#define CI_STREAM_STDOUT 1
#define CI_STREAM_STDERR 2

/*
 * ci_output_fn - receives a cell's output while it runs.
 * @stream: CI_STREAM_STDOUT or CI_STREAM_STDERR.
 * @data:   @len bytes (1 or more) as the cell wrote them, raw, not
 *          NUL-terminated, in whole lines: each chunk ends with a line
 *          break, except a line of 16 KiB or more (given in pieces of at
 *          least 16 KiB less a character, cut on UTF-8 character
 *          boundaries), a partial line the cell leaves waiting for 5 ms (a
 *          progress bar printed with end=''), the chunk that reaches the
 *          output limit, and what is left when the run ends. Borrowed for
 *          the duration of the call.
 * @payload: the pointer given with the function.
 * Called on the thread that called ci_run_stream(), between the moments
 * the output is read from the worker and the run ends. It may call
 * ci_session_interrupt(); any other call on the same session is refused
 * (CI_EBUSY) or undefined behaviour, as during any run.
 */
typedef void (*ci_output_fn)(int stream, const char *data, size_t len, void *payload);

/*
 * ci_run_stream - ci_run(), and @fn is called with stdout and stderr as
 * they arrive: a cell that prints a line a second is seen a line a second.
 * Each stream's bytes come in the order they were written; between the two
 * streams, in the order the host read them (two pipes: what a cell writes
 * to stdout and then to stderr within a few microseconds may arrive the
 * other way round). @fn gets the bytes of each stream up to the output
 * limit; a stream that passes it gets one note, a line that says so and
 * where the whole stream goes, and nothing more. The result holds the
 * stream's head and tail (ci_config_set_output_limit).
 * @fn: may be NULL (then this is ci_run).
 * @return as ci_run().
 */
CI_API int ci_run_stream(ci_session *s, const char *code, ci_output_fn fn, void *payload,
                         ci_result **out);

/*
 * ci_input_fn - answers a cell's input() or getpass.getpass(), as a
 * Jupyter front end answers a kernel's input_request.
 * @prompt:   the prompt the cell gave (input("n? ") gives "n? ",
 *            getpass() "Password: "), UTF-8 without NUL, NUL-terminated,
 *            at most 4096 bytes (a longer one is cut on a character
 *            boundary). The cell's text, as untrusted as its output.
 *            Borrowed for the duration of the call.
 * @password: 1 for getpass.getpass() (the answer is a secret: do not echo
 *            it), else 0.
 * @reply:    NULL on entry. To answer, point it to a NUL-terminated UTF-8
 *            string of at most 1048576 bytes (1 MiB) allocated with
 *            malloc(3) (strdup), which the library frees with free(3)
 *            whatever the return. input() returns it exactly (give the
 *            line without its newline); "\x04" (Ctrl-D) makes input()
 *            raise EOFError, as in Jupyter.
 * @payload:  ci_run_options.payload.
 * @return 0 to answer; anything else, or 0 with *@reply still NULL,
 *         refuses: the cell's input() raises StdinNotImplementedError, as
 *         without on_input, saying the host did not answer. An answer that
 *         is not UTF-8 or is over 1 MiB is refused the same way.
 *
 * Neither the prompt nor the answer is written to the cell's stdout; what
 * the cell printed before it asked has been passed to on_output first.
 * Called on the thread that called ci_run_ex(), for input() in the cell's
 * main thread (in a thread the cell started, input() raises at once, as
 * without on_input). That is the worker's own rule, not a boundary: a
 * hostile cell can write the request itself, from any thread, with any
 * prompt and password flag, so treat the prompt as the cell's text and
 * the call as the cell's request. The cell waits meanwhile and its timeout runs on:
 * ci_run_ex() cannot return while on_input runs, so one that blocks holds
 * the run past its timeout. When it returns after the timeout, or after
 * ci_session_interrupt() (which it may call itself), its answer is
 * dropped and the cell is interrupted at once (CI_STATUS_TIMEOUT,
 * CI_STATUS_INTERRUPTED); once the cell is interrupted, on_input is not
 * called again in that run. Any other call on the same session is refused
 * (CI_EBUSY) or undefined behaviour, as during any run.
 */
typedef int (*ci_input_fn)(const char *prompt, int password, char **reply, void *payload);

/*
 * Options of one run, for ci_run_ex(). A versioned struct, as libgit2's
 * option structs: initialise it with CI_RUN_OPTIONS_INIT or
 * ci_run_options_init(), then set the fields you need. Fields are only
 * ever appended; the library reads only those of the version the struct
 * names, so a program built with an older header (a smaller struct) keeps
 * working and the fields it lacks take their defaults.
 *  version     CI_RUN_OPTIONS_VERSION (2; 1 has no on_input).
 *  timeout_ms  this run's wall-clock limit in milliseconds, instead of the
 *              session's (ci_config_set_timeout_ms); 0, the default, keeps
 *              the session's. At most 86400000.
 *  on_output   as for ci_run_stream(); NULL by default.
 *  payload     given to on_output and on_input; NULL by default.
 *  on_input    (version 2) answers the cell's input() and getpass()
 *              (ci_input_fn); NULL, the default, makes them raise
 *              StdinNotImplementedError at once.
 */
#define CI_RUN_OPTIONS_VERSION 2
typedef struct ci_run_options {
    unsigned int version;
    unsigned long timeout_ms;
    ci_output_fn on_output;
    void *payload;
    ci_input_fn on_input; /* version 2 */
} ci_run_options;
#define CI_RUN_OPTIONS_INIT {CI_RUN_OPTIONS_VERSION, 0, NULL, NULL, NULL}

/*
 * ci_run_options_init - fills @opts with the defaults of @version,
 * writing only the fields that version has.
 * @return CI_OK; CI_EINVAL if @opts is NULL or @version is not one this
 *         library knows (1 to CI_RUN_OPTIONS_VERSION).
 */
CI_API int ci_run_options_init(ci_run_options *opts, unsigned int version);

/*
 * ci_run_ex - ci_run() with options. @opts may be NULL (the defaults).
 * @return as ci_run(); also CI_EINVAL if @opts has an unknown version or
 *         a timeout over 86400000 ms.
 */
CI_API int ci_run_ex(ci_session *s, const char *code, const ci_run_options *opts,
                     ci_result **out);

/* ci_result_free - frees @r; NULL is a no-op. */
CI_API void ci_result_free(ci_result *r);

/* ci_result_status - what happened to the cell; CI_STATUS_KILLED for NULL. */
CI_API ci_status ci_result_status(const ci_result *r);

/*
 * ci_result_stdout, ci_result_stderr - everything the cell wrote to file
 * descriptor 1 (or 2), from Python or from C, including what threads of
 * earlier cells wrote while it ran (they run only while a cell does,
 * ci_run); a stream that passed the output
 * limit as its head, a marker line and its tail (at most the limit and
 * 400 bytes; ci_config_set_output_limit).
 * The bytes are as written (not necessarily UTF-8, may hold NULs), with
 * a NUL after them that *@len does not count.
 * @len: receives the length in bytes; may be NULL.
 * @return a borrowed pointer valid until ci_result_free(@r), never NULL
 *         for a non-NULL @r ("" when nothing was written); NULL for NULL.
 */
CI_API const char *ci_result_stdout(const ci_result *r, size_t *len);
CI_API const char *ci_result_stderr(const ci_result *r, size_t *len);

/*
 * ci_result_truncated - what was cut or left out, as a mask of the
 * CI_TRUNCATED_* bits below; 0 when nothing was, and for NULL.
 *  CI_TRUNCATED_STDOUT   stdout passed the output limit and was cut
 *  CI_TRUNCATED_STDERR   stderr passed the output limit and was cut
 *  CI_TRUNCATED_TEXT     the value's repr, the error message or the
 *                        traceback (folded or whole) passed the output
 *                        limit and was cut in the middle
 *  CI_TRUNCATED_OUTPUTS  rich outputs were left out (see
 *                        ci_result_outputs_omitted)
 *  CI_TRUNCATED_FILES    the list of changed files is incomplete (see
 *                        ci_result_file_count)
 */
#define CI_TRUNCATED_STDOUT 0x1
#define CI_TRUNCATED_STDERR 0x2
#define CI_TRUNCATED_TEXT 0x4
#define CI_TRUNCATED_OUTPUTS 0x8
#define CI_TRUNCATED_FILES 0x10
CI_API int ci_result_truncated(const ci_result *r);

/*
 * ci_result_rolled_back - 1 if the cell killed the worker (CI_STATUS_KILLED)
 * and the session was rolled back to its state just before the cell
 * (ci_config_set_rollback), so that the next ci_run() works without
 * ci_session_restart(); 0 otherwise, and for NULL.
 */
CI_API int ci_result_rolled_back(const ci_result *r);

/*
 * ci_result_spill_file - where the whole of a cut stream is: the
 * workspace-relative name of its spill file (".outputs/cell-12.stdout",
 * see ci_config_set_spill_limit), for ci_session_get_file() or the next
 * cell; a file the spill limit stopped holds the stream's first bytes
 * only, as the marker says ("its first 16 MiB are in ..."). Spill files
 * are among the run's changed files (ci_result_file_name). Without a
 * spill file the marker ends "the rest was not kept" (spill files off) or
 * says why the file could not be written.
 * @stream: CI_STREAM_STDOUT or CI_STREAM_STDERR.
 * @whole:  receives 1 if the file holds the whole stream, 0 if the spill
 *          limit stopped it (or when NULL is returned); may be NULL.
 * @return a borrowed string, as for ci_result_stdout; NULL when the stream
 *         was not cut, when the file could not be written (the marker line
 *         says why) or spill files are off, for NULL @r and for another
 *         @stream.
 */
CI_API const char *ci_result_spill_file(const ci_result *r, int stream, int *whole);

/*
 * ci_result_cut - where a stream past the output limit was cut, for a host
 * that cuts the text again (to fit a tool result, say) and must count
 * what the two cuts left out without reading the cell's text for a
 * marker, which the cell can print too.
 * @stream: CI_STREAM_STDOUT or CI_STREAM_STDERR.
 * @at, @len: receive the offset and length, in bytes, of the marker line
 *            in ci_result_stdout()'s (or _stderr()'s) text, its line
 *            breaks included; may be NULL.
 * @bytes, @lines: receive the bytes and line breaks the marker says were
 *            left out; may be NULL.
 * @return 1 if the stream was cut; else 0 (for NULL @r and another
 *         @stream too), with every output set to 0.
 */
CI_API int ci_result_cut(const ci_result *r, int stream, size_t *at, size_t *len,
                         ci_uint64 *bytes, ci_uint64 *lines);

/*
 * ci_result_value - the text/plain of the cell's last expression, UTF-8,
 * as a Jupyter kernel's execute_result has it: IPython's formatter, whose
 * pretty printer puts a long list an item a line and which formatters a
 * cell registers change (sympy's init_printing, %precision). NULL if the
 * cell did not end with an expression, ended with a semicolon, the value
 * was None, it had no text form (its representations raised, their
 * traceback on stderr; or it displayed itself, _ipython_display_), or the
 * cell failed. Borrowed, as for ci_result_stdout.
 */
CI_API const char *ci_result_value(const ci_result *r);

/*
 * ci_result_error_name - the exception's class name ("ZeroDivisionError")
 * for CI_STATUS_ERROR, CI_STATUS_MEMORY ("MemoryError"),
 * CI_STATUS_TIMEOUT ("TimeoutError") and CI_STATUS_INTERRUPTED
 * ("KeyboardInterrupt", whatever the cell made of the interrupt); for
 * CI_STATUS_KILLED one of "WorkerDied", "SandboxViolation" (killed by the
 * seccomp filter), "CPULimitExceeded" (killed by the kernel at the CPU
 * limit, ci_config_set_cpu_limit), "ProtocolError", "TimeoutError" (did not stop within
 * the grace period after the timeout, or could not be sent the cell or
 * an input() answer before it) or "KeyboardInterrupt" (did not stop
 * within the grace period after ci_session_interrupt()): one name per
 * fate, whether the cell stopped or had to be killed, the status telling
 * which; NULL when the cell succeeded.
 */
CI_API const char *ci_result_error_name(const ci_result *r);

/*
 * ci_result_error_value - the exception's message (str(exc)), or for
 * CI_STATUS_KILLED a sentence naming the exit code or signal (for a
 * "SandboxViolation", the forbidden system call when the worker could name
 * it: "the cell made a forbidden system call (ptrace); the worker was
 * killed"); NULL when the cell succeeded. Borrowed.
 */
CI_API const char *ci_result_error_value(const ci_result *r);

/*
 * ci_result_traceback - the formatted traceback, as Python prints it,
 * showing the cell's own frames (as File "<cell N>") and none of the
 * worker's; NULL when there is none. Borrowed.
 * Between the cell's frames and the frame that raised, each run of other
 * code's frames (the standard library's, a package's) is folded into one
 * line that counts them and names their files, in each part of a chained
 * exception:
 *     ... 8 frames in urllib/request.py, http/client.py, socket.py ...
 */
CI_API const char *ci_result_traceback(const ci_result *r);

/*
 * ci_result_traceback_full - the same traceback with nothing folded:
 * every frame but the worker's, as Python prints it. When nothing was
 * folded it is the same text as ci_result_traceback(), and it is NULL
 * exactly when that is. Cut at the output limit as the others are
 * (CI_TRUNCATED_TEXT). Borrowed, as for ci_result_traceback.
 */
CI_API const char *ci_result_traceback_full(const ci_result *r);

/*
 * Rich outputs: what a notebook shows under a cell besides its text. Each
 * output is one representation (a MIME type and its bytes) of one message
 * in Jupyter's sense, in the order the cell produced them:
 *  - display_data: each display(obj, ...) call (IPython's display,
 *    a builtin as in a kernel, or imported from IPython.display) gives one
 *    message per object; every matplotlib figure still open when the cell
 *    ends (or when it calls plt.show()) gives one, rendered as image/png at
 *    its dpi (ci_config_set_figure_dpi; %config InlineBackend.figure_formats
 *    chooses other formats), with its text as text/plain (only the text
 *    when nothing is drawn on it, as in IPython), in figure number order,
 *    and is then closed, so the next cell starts with none open (after
 *    plt.ioff() they wait for plt.show(), as in the inline backend).
 *    Figures are collected even when the cell raised. A figure already
 *    returned by display() or as the cell's value is not returned again
 *    (the inline backend would show it twice).
 *  - execute_result: the cell's last expression, when its value has
 *    representations besides text/plain (a pandas DataFrame gives
 *    text/html). Its text/plain form is ci_result_value(), not an output.
 *  - update_display_data: a display handle's update() (or
 *    update_display(obj, display_id=...)): new representations for the
 *    display_data messages given that display id, in this run or an
 *    earlier one, which a front end shows in their place.
 *  - clear_output: clear_output(wait=...): a front end drops what the
 *    cell showed before it, at once or, with wait=True, when the next
 *    output comes (ci_result_output_wait). It is one output with the MIME
 *    type "" and no data.
 * A display_data may carry a display id (display(obj, display_id=...)
 * or display_id=True, in Jupyter's messaging spec the transient
 * display_id), and an update_display_data always does
 * (ci_result_output_display_id).
 *
 * Objects are rendered by IPython's own DisplayFormatter, as a kernel
 * renders them: _repr_mimebundle_, the _repr_*_ methods (png, jpeg, svg,
 * html, markdown, latex, json, javascript, pdf), formatters registered
 * with get_ipython().display_formatter, _ipython_display_, and IPython's
 * pretty printer as text/plain; metadata is dropped, and binary types
 * travel as bytes (base64 text is decoded). A representation that raises
 * is left out and its traceback goes to stderr. MIME types are folded to
 * lower case. (docs/ipython.md says what else of IPython a cell has.)
 *
 * Messages of every type are numbered in the order they come, counting
 * only those that kept at least one output: a message whose every
 * representation went over the display limits takes no number. Each
 * representation that does not fit the limits is left out alone; later,
 * smaller ones still come.
 *
 * Within one message the representations come richest first (image/png,
 * image/jpeg, image/svg+xml, text/html, text/markdown, text/latex,
 * application/json, others, text/plain), so showing the first output of
 * each message, as a notebook front end does, shows the best one.
 *
 * Data of text types (text/..., application/json, application/javascript,
 * and types ending in +json or +xml) is UTF-8 without NUL bytes; other
 * types (image/png, application/pdf...)
 * are binary. Either way the buffer has a NUL after its last byte that
 * the length does not count.
 */
#define CI_MAX_OUTPUTS 10000

/* Jupyter's output_type (msg_type) of the message an output belongs to;
 * values may be appended. */
typedef enum {
    CI_OUTPUT_DISPLAY_DATA = 1,
    CI_OUTPUT_EXECUTE_RESULT = 2,
    CI_OUTPUT_UPDATE_DISPLAY_DATA = 3,
    CI_OUTPUT_CLEAR_OUTPUT = 4
} ci_output_type;

/* ci_result_output_count - the number of outputs; 0 for NULL. */
CI_API size_t ci_result_output_count(const ci_result *r);

/*
 * ci_result_output_mime - the MIME type of output @i ("image/png",
 * "text/html"...), ASCII; "" for a clear_output; NULL for NULL or @i out
 * of range. Borrowed, valid until ci_result_free(@r).
 */
CI_API const char *ci_result_output_mime(const ci_result *r, size_t i);

/*
 * ci_result_output_data - the bytes of output @i; for a clear_output an
 * empty buffer (*@len 0, a valid pointer to a NUL).
 * @len: receives their number; may be NULL; 0 when the return is NULL.
 * @return borrowed, valid until ci_result_free(@r); NULL for NULL or @i
 *         out of range.
 */
CI_API const void *ci_result_output_data(const ci_result *r, size_t i, size_t *len);

/*
 * ci_result_output_type - the type of output @i's message:
 * CI_OUTPUT_DISPLAY_DATA, CI_OUTPUT_EXECUTE_RESULT,
 * CI_OUTPUT_UPDATE_DISPLAY_DATA or CI_OUTPUT_CLEAR_OUTPUT; 0 for NULL or
 * @i out of range.
 */
CI_API ci_output_type ci_result_output_type(const ci_result *r, size_t i);

/*
 * ci_result_output_message - which message output @i belongs to: 0 for
 * the run's first message of any type, counting up by one; the outputs
 * of one message are consecutive and share its type, display id and
 * wait flag. 0 for NULL or @i out of range.
 */
CI_API size_t ci_result_output_message(const ci_result *r, size_t i);

/*
 * ci_result_output_display_id - the display id of output @i's message:
 * Jupyter's transient display_id, which a display_data has when the cell
 * asked for one (display(obj, display_id=True) makes one up, a string
 * names its own) and an update_display_data always has, naming the
 * display_data messages it replaces; never an execute_result or a
 * clear_output. UTF-8 without NUL bytes, 1 to 255 bytes.
 * @return borrowed, valid until ci_result_free(@r); NULL when the message
 *         has none, for NULL or @i out of range.
 */
CI_API const char *ci_result_output_display_id(const ci_result *r, size_t i);

/*
 * ci_result_output_wait - whether output @i is a clear_output with
 * wait=True (Jupyter's clear_output "wait": clear only when the next
 * output arrives, so that what is shown does not flicker).
 * @return 1 for such a clear_output; 0 for one without wait, for any
 *         other output, for NULL or @i out of range.
 */
CI_API int ci_result_output_wait(const ci_result *r, size_t i);

/*
 * ci_result_outputs_omitted - how many outputs were left out for the
 * display limits (ci_config_set_display_limits) or CI_MAX_OUTPUTS; 0 for
 * NULL.
 */
CI_API size_t ci_result_outputs_omitted(const ci_result *r);

/*
 * ci_result_file_count, ci_result_file_name - the regular files in the
 * workspace that were created or modified since the previous run's end
 * (or, for the first run and after ci_session_put_file() or a restart,
 * since this run began): what the cell wrote, what threads of earlier
 * cells wrote meanwhile, and the run's spill files (ci_result_spill_file,
 * which the host writes). Files written by ci_session_put_file() are not
 * listed; deleted files are not listed. Names are relative to the
 * workspace, "/"-separated, sorted by byte value, and raw bytes (file
 * names need not be UTF-8). The library finds them by comparing the
 * workspace before and after the run (inode, size, modification and
 * change times, as stat(2) gives them), looking at most 32 directories
 * deep, at 100000 entries and 8 MiB of names, for at most 50 ms a scan
 * (the scan before the cell counts against its timeout): past that, or
 * under a directory the host cannot read, the list is incomplete (and
 * may name files the cell did not touch) and ci_result_truncated() has
 * CI_TRUNCATED_FILES set. A file whose metadata alone changed (chmod)
 * counts as modified. Empty when the worker was killed (without
 * CI_TRUNCATED_FILES); the next run then compares with its own start.
 * @return the count (0 for NULL); the name is borrowed, valid until
 *         ci_result_free(@r), NULL for NULL or @i out of range.
 */
CI_API size_t ci_result_file_count(const ci_result *r);
CI_API const char *ci_result_file_name(const ci_result *r, size_t i);

/*
 * Resources of the run, measured by the host, not reported by the worker.
 *  ci_result_wall_time_us   microseconds from sending the cell to having
 *                           its result (CLOCK_MONOTONIC).
 *  ci_result_cpu_time_us    microseconds of CPU time, user and system,
 *                           that the worker process used meanwhile (all its
 *                           threads; clock_getcpuclockid(3)); 0 when the
 *                           worker died during the run.
 *  ci_result_peak_memory    the worker's peak resident set size in bytes
 *                           (VmHWM, proc(5)) during the run. The host
 *                           resets the peak before each run through
 *                           /proc/PID/clear_refs, which only a root host may
 *                           write (the worker is not dumpable): elsewhere
 *                           this is the peak since the worker started. 0
 *                           when the worker died during the run.
 * All return 0 for NULL.
 */
CI_API ci_uint64 ci_result_wall_time_us(const ci_result *r);
CI_API ci_uint64 ci_result_cpu_time_us(const ci_result *r);
CI_API ci_uint64 ci_result_peak_memory(const ci_result *r);

/*
 * ci_result_execution_count - the cell's number in its session, counting
 * from 1 after each start or restart, as Jupyter's execution_count; 0
 * for NULL.
 */
CI_API int ci_result_execution_count(const ci_result *r);

#ifdef __cplusplus
}
#endif

#endif /* CODEINTERP_H */
