/*
 * What the files of codeinterp-worker share: its exit codes, its fatal
 * exit, and the interfaces of main.c's input channel, interp.c,
 * lockdown.c, privileges.c, namespaces.c and seccomp.c.
 * Nothing here is seen by the host, which only shares lib/proto.h.
 */
#ifndef CI_WORKER_H
#define CI_WORKER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codeinterp.h" /* CI_MAX_OUTPUTS */
#include "proto.h"
#include "worker_start.h"

struct ci_manifest_policy; /* manifest.h */
struct ci_spawn_request;   /* zygote_proto.h */

/*
 * Exit codes. Each start-up failure has its own so the host can name it;
 * after READY only CI_EXIT_HOST_GONE and 3 come from the worker itself (a
 * cell may call os._exit() with any code).
 */
enum ci_exit {
    CI_EXIT_USAGE = 2,        /* bad command line */
    CI_EXIT_PROTOCOL = 3,     /* a malformed frame, or the channel failed */
    CI_EXIT_DESCRIPTORS = 4,  /* descriptors 0-3 are not all open */
    CI_EXIT_PDEATHSIG = 5,    /* prctl(PR_SET_PDEATHSIG) failed */
    CI_EXIT_PARENT = 6,       /* the parent is not --parent (it died) */
    CI_EXIT_SIGMASK = 7,      /* pthread_sigmask failed */
    CI_EXIT_WATCHDOG = 8,     /* the channel watchdog thread did not start */
    CI_EXIT_PYTHON = 9,       /* CPython did not start or warm up */
    CI_EXIT_SETSID = 10,      /* setsid failed */
    CI_EXIT_DUMPABLE = 11,    /* prctl(PR_SET_DUMPABLE) failed */
    CI_EXIT_RLIMIT = 12,      /* setrlimit failed */
    CI_EXIT_NO_NEW_PRIVS = 13, /* prctl(PR_SET_NO_NEW_PRIVS) failed */
    CI_EXIT_SECCOMP = 14,     /* the seccomp filter was not built or loaded */
    CI_EXIT_LANDLOCK = 15,    /* Landlock exists but refused our ruleset */
    CI_EXIT_PRIVILEGES = 16,  /* leaving root or dropping capabilities failed */
    CI_EXIT_NAMESPACES = 17,  /* unshare failed other than by being refused */
    CI_EXIT_MANIFEST = 18,    /* the signed package manifest's policy failed (manifest.c) */
    CI_EXIT_HOST_GONE = 19,   /* the host closed the channel */
};

_Static_assert(CI_EXIT_MANIFEST == CI_WORKER_EXIT_MANIFEST, "the host maps exit 18");
_Static_assert(CI_EXIT_HOST_GONE == CI_WORKER_EXIT_HOST_GONE, "worker_start.h names exit 19");

/* The limits from the command line, in bytes (but the dpi). */
struct ci_limits {
    uint64_t memory;          /* RLIMIT_AS */
    uint64_t fsize;           /* RLIMIT_FSIZE */
    size_t output_limit;      /* cap of each text field of a RESULT */
    size_t display_limit;     /* cap of one rich output's data */
    size_t display_run_limit; /* cap of all of a run's rich outputs' data */
    unsigned dpi;             /* matplotlib figures' resolution */
    uint64_t tasks;           /* RLIMIT_NPROC, in the worker's user namespace (tasks.c) */
    uint64_t quota_dev;       /* st_dev of the session directory's tmpfs, or 0 (quota.c) */
    uint64_t cpu;             /* RLIMIT_CPU past the start's, seconds; 0: none */
    const char *preload;      /* modules to import before READY, comma-separated */
};

/* Prints "codeinterp-worker: <message>" on stderr and exits with @code. */
_Noreturn void ci_fatal(enum ci_exit code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------- pymodule.c */

/* Registers the built-in module _codeinterp (the constants and checks
 * the worker's Python shares with C); before CPython starts. */
void ci_pymodule_register(void);

/* -------------------------------------------------------------- main.c */

/* input() during a cell, as proto.h's INPUT_REQUEST and INPUT_REPLY; for
 * pymodule.c, on the main thread with the GIL. */

/* Sends READY, with the CI_LAYER_* bits @layers and the descriptor of
 * the seccomp listener the worker holds (@listener, or -1), on the
 * channel: a worker's stream, or a zygote's SOCK_SEQPACKET socket, which
 * takes the frame as one message. A host that went away ends the
 * process. */
void ci_send_ready(uint32_t layers, int listener);

/* 1 if the running cell's RUN has CI_RUN_FLAG_INPUT and the caller is the
 * worker's main thread, the one thread that reads the channel. */
int ci_input_allowed(void);

/* Sends an INPUT_REQUEST of @flags and the @len bytes of @prompt (UTF-8
 * without NUL, at most CI_INPUT_PROMPT_MAX), first dropping the replies
 * to requests given up on, and reads the reply's status into *@status and
 * the length of its text, which ci_input_read() then reads, into
 * *@reply_len. @wait returns 0 once the channel is readable, or -1 to give
 * up (then so does this: the request, if sent, is given up on and its
 * reply dropped later, by this or by the wait for the next cell). 0, or
 * -1 as @wait returned. A malformed reply ends the worker. */
int ci_input_ask(uint32_t flags, const char *prompt, size_t len, int (*wait)(void),
                 uint32_t *status, size_t *reply_len);

/* Reads the @len bytes of the reply's text into @buf, or drops them if
 * @buf is NULL. */
void ci_input_read(char *buf, size_t len);

/*
 * Host functions, as proto.h's CALL and CALL_REPLY. A cell's threads may
 * call them, one at a time: ci_channel_lock is held by whoever reads the
 * channel during a cell, from its request to the end of its reply (input()
 * too). Nobody waits for it holding the GIL, so its holder may take the
 * GIL.
 */
extern pthread_mutex_t ci_channel_lock;

/* Under ci_channel_lock: 1 while a cell runs, so calls may be made. */
int ci_calls_open(void);

/* Closes the calls when a cell ends, waiting for the one in progress;
 * without the GIL. */
void ci_calls_close(void);

/* Under ci_channel_lock: sends a CALL of @name (@name_len bytes) with the
 * @len bytes of JSON arguments at @json, first dropping the replies owed,
 * and reads the reply's status into *@status and the length of what
 * follows it, which ci_input_read() then reads, into *@reply_len. @wait as
 * for ci_input_ask(); 0, or -1 as @wait returned. A malformed reply ends
 * the worker. */
int ci_call_ask(const char *name, size_t name_len, const char *json, size_t len,
                int (*wait)(void), uint32_t *status, size_t *reply_len);
/* The same for an HTTP request, FETCH and FETCH_REPLY: @len bytes at
 * @request are the FETCH's payload (fetch.py wrote it). */
int ci_fetch_ask(const void *request, size_t len, int (*wait)(void), uint32_t *status,
                 size_t *reply_len);
/* The same for a %pip install, INSTALL and INSTALL_REPLY: @op
 * (CI_INSTALL_*) and its @len bytes of argument at @arg (pip.py's). */
int ci_install_ask(uint32_t op, const char *arg, size_t len, int (*wait)(void), uint32_t *status,
                   size_t *reply_len);

/* One function of a FUNCTIONS frame: its name and description, neither
 * NUL-terminated. */
struct ci_function_def {
    const char *name;
    size_t name_len;
    const char *doc;
    size_t doc_len;
};

/* ------------------------------------------------------------ interp.c */

/* A field of a RESULT: the text fields' bytes are UTF-8 without NULs,
 * the OUTPUTS field's are binary; data is NULL if absent. */
struct ci_text {
    const char *data;
    size_t len;
};

/* What became of one cell, as the RESULT frame carries it. */
struct ci_cell {
    uint32_t outcome;         /* enum ci_outcome */
    uint32_t flags;           /* CI_FLAG_* */
    struct ci_text value;
    struct ci_text ename;
    struct ci_text evalue;
    struct ci_text traceback;
    struct ci_text traceback_full; /* the whole one, when traceback is folded */
    struct ci_text outputs;   /* the OUTPUTS field, encoded; NULL if none */
    uint32_t omitted;         /* outputs left out for the display limits */
    struct ci_text refusals;  /* the REFUSALS field, encoded; NULL if none */
    struct ci_text state;     /* a SNAPSHOT run's STATE, PACKAGES and */
    struct ci_text packages;  /* LEFT_OUT fields; NULL for any other run */
    struct ci_text left_out;
    void *owner;              /* keeps the texts alive; private to interp.c */
};

/* Starts CPython (isolated, UTF-8, unbuffered stdio, SIGINT handler) in
 * "/", imports the modules of @preload, then matplotlib.pyplot, and loads
 * the cell runner. For a @zygote, also builds what a first cell would
 * build lazily (a pandas frame, a figure) and then moves every object
 * made so far out of the cyclic collector's reach (gc.freeze()), so its
 * children keep sharing those pages. Exits with CI_EXIT_PYTHON on
 * failure. Returns without holding the GIL. */
void ci_interp_warm(const char *preload, int zygote);

/* Gives the runner its session: the display limits and dpi of @limits,
 * the working directory as the workspace, and, unless @session_dir is
 * NULL, HOME, MPLCONFIGDIR and TMPDIR under @session_dir. Also reseeds
 * numpy's global generator. Exits with CI_EXIT_PYTHON on failure. */
void ci_interp_configure(const struct ci_limits *limits, const char *session_dir);

/* ci_interp_warm(limits->preload, 0), then ci_interp_configure(limits,
 * NULL): a worker started by exec, whose environment is its session's. */
void ci_interp_start(const struct ci_limits *limits);

/* In a spare child: runs a small first cell (a pandas frame's sum) in a
 * namespace thrown away, and the session's setup with this process's
 * own settings (the runner's _rehearse()), so that the pages of the
 * zygote they write (reference counts, caches of the compiler and of
 * pandas) are copied now rather than on the session's start. */
void ci_interp_prefault(void);

/* clone(2) with @flags and SIGCHLD, with CPython's fork hooks around it
 * (PyOS_BeforeFork and the rest). Returns 0 in the child, the child's pid
 * in the parent, or -errno. Single-threaded callers only. */
pid_t ci_interp_fork(unsigned long flags);

/* The checkpoint's fork(3) (checkpoint.c): unlike ci_interp_fork(),
 * safe in a process with threads (glibc's and the libraries' at-fork
 * handlers run: malloc's locks, OpenBLAS's pool), with every signal
 * blocked and no Python code run. Returns as fork(3); in the child,
 * which must call ci_interp_take_over() before any Python, with the
 * signals still blocked. */
pid_t ci_interp_fork_checkpoint(void);

/* In the checkpoint, once it takes over: CPython's after-fork work
 * (PyOS_AfterFork_Child), random's generator kept as it was, the
 * signal mask back. */
void ci_interp_take_over(void);

/* ------------------------------------------------------------ zygote.c */

/* The zygote's life (see zygote.c): leaves root, warms up with
 * @preload, says READY on fd 3, then hands each SPAWN request to a spare
 * child forked ahead. Returns only in a child, with its request in @req
 * and its session directory in @session_dir (static storage), its
 * descriptors 0..3 in place, and the CI_LAYER_* bits of the namespaces
 * ci_lockdown_spare() made; exits when the host closes the channel. */
uint32_t ci_zygote_serve(pid_t parent, const char *preload, struct ci_spawn_request *req,
                         char **session_dir);

/*
 * Runs one cell of @len bytes of UTF-8 source as cell number @count and
 * fills @out; with @flags CI_RUN_FLAG_SNAPSHOT it pickles the state
 * instead (@len is 0), with CI_RUN_FLAG_RESTORE it loads the state of
 * @src (a RESTORE payload, proto.h). Only the host's SIGINT queued with @count (or one the cell
 * sends itself) interrupts it. Never fails: whatever goes wrong becomes the outcome. The
 * texts cut at @limits->output_limit bytes; the outputs are within the
 * display limits. Returns holding the GIL, which ci_interp_cell_done()
 * releases with the texts and outputs.
 */
void ci_interp_run(uint32_t count, uint32_t flags, const char *src, size_t len,
                   const struct ci_limits *limits, struct ci_cell *out);
void ci_interp_cell_done(struct ci_cell *cell);

/* Makes the @n host functions of @defs the cell's builtins and the module
 * codeinterp_host (functions.py), with the call limits of the FUNCTIONS
 * frame. Exits with CI_EXIT_PYTHON on failure. */
void ci_interp_define(const struct ci_function_def *defs, size_t n, uint32_t args_limit,
                      uint32_t result_limit);
/* Sends the cell's HTTP clients' requests to the host (fetch.py's
 * enable()), with the NETWORK frame's body limits in bytes. */
void ci_interp_enable_network(uint32_t request_limit, uint32_t response_limit);

/* ---------------------------------------------------------- lockdown.c */

/* Sets the parent-death signal to SIGKILL and checks that the parent is
 * still @parent; exits with CI_EXIT_PDEATHSIG or CI_EXIT_PARENT. */
void ci_tie_to_parent(pid_t parent);

/* ci_tie_to_parent() for pid 1 of a new PID namespace, whose parent
 * reads as 0 from inside: checks through @parent_pidfd, a pidfd of the
 * parent opened by the zygote, that it has not exited. Later
 * ci_tie_to_parent() calls accept a parent that reads as 0. */
void ci_tie_to_outside_parent(int parent_pidfd);

/* ci_tie_to_parent() for the worker that ci_reaper_start() forked:
 * the parent is pid 1, and later ci_tie_to_parent() calls accept it. */
void ci_tie_to_reaper(void);

/* Its own session (setsid), unless it leads one; exits with
 * CI_EXIT_SETSID. */
void ci_own_session(void);

/* The lockdown, one function per path, each step in order (the table atop
 * lockdown.c); each returns the CI_LAYER_* bits it applied, with @have's,
 * and every failure exits with its own code.
 *
 * ci_lockdown_zygote(): the zygote's start, before its warm-up: its own
 * session, never root, no capabilities, tied to @parent, not dumpable.
 * ci_lockdown_spare(): a zygote's spare child, before its session is
 * known: the user (unless @own_pidns: the clone made it; @uid and @gid
 * are mapped into it), network, IPC and UTS namespaces, tied to @parent.
 * ci_lockdown_start(): every worker, single-threaded, before the warm-up
 * (exec) or the configure (a zygote's child, @zygote): the namespaces
 * not in @have, the new root, never root, no capabilities, tied to
 * @parent again, the task limit, the disk quota check, umask 077.
 * ci_lockdown(): after the warm-up, the seccomp filter last (Landlock is
 * best effort). */
uint32_t ci_lockdown_zygote(pid_t parent);
uint32_t ci_lockdown_spare(pid_t parent, int own_pidns, unsigned uid, unsigned gid);
uint32_t ci_lockdown_start(pid_t parent, uint32_t have, int zygote, const struct ci_limits *limits);
/* Signals queued for the worker at once (RLIMIT_SIGPENDING) when it has a
 * user namespace of its own: the host's interrupt needs one. */
#define CI_SIGPENDING_MAX 64
/* With @rollback (a worker under a reaper), *@listener receives the
 * seccomp listener (ci_seccomp_load), else -1. */
uint32_t ci_lockdown(pid_t parent, uint32_t have, const struct ci_limits *limits, int rollback,
                     int *listener);

/* With a manifest: plans its read rules once (ci_manifest_plan), and in
 * a zygote holds them open; exits if the kernel has no Landlock. */
void ci_landlock_plan(int zygote);

/* With a manifest: a Landlock ruleset holding the plan's rules, made
 * ahead of the session (a spare does it while it waits); ci_lockdown()
 * adds the session's rules to it. Returns its descriptor, or -1 without
 * a manifest. ci_landlock_use() tells ci_lockdown() where it was moved. */
int ci_landlock_prepare(void);
void ci_landlock_use(int fd);

/* -------------------------------------------------------- privileges.c */

/* If any of our uids is 0: locks the securebits, empties the bounding
 * set, then switches to CI_WORKER_UID/GID with no supplementary groups
 * and checks the workspace is still reachable. Exits with
 * CI_EXIT_PRIVILEGES if any of that fails. */
void ci_leave_root(void);

/* Empties the ambient, effective, permitted and inheritable capability
 * sets, and with CAP_SETPCAP the bounding set too (and locks the
 * securebits). Exits with CI_EXIT_PRIVILEGES on an unexpected failure. */
void ci_drop_capabilities(void);

/* ci_drop_capabilities(), but for @cap (CAP_*), kept effective and
 * permitted and in the bounding set. */
void ci_keep_capability(int cap);

/* Exits with CI_EXIT_PRIVILEGES saying that our uid cannot reach the
 * workspace at @path (errno @err) and what the host must change. */
_Noreturn void ci_fatal_unreachable(const char *path, int err);

/* CI_LAYER_UNPRIVILEGED if none of our uids is 0 and the effective,
 * permitted, inheritable and ambient capability sets are empty; else 0. */
uint32_t ci_check_unprivileged(void);

/* -------------------------------------------------------- namespaces.c */

/* A user namespace of our own, our uid and gid mapped to themselves.
 * CI_LAYER_USERNS, or 0 if the kernel refuses it. Single-threaded only. */
uint32_t ci_unshare_user(void);

/* Maps @uid and @gid (ours outside) to themselves in the user namespace
 * we are in and just made, denying setgroups(2) (user_namespaces(7));
 * a map the kernel refuses is skipped. Single-threaded only. */
void ci_map_user(unsigned uid, unsigned gid);

/*
 * The zygote's own user namespace, our @uid and @gid mapped to themselves,
 * and a mount namespace it owns, a slave copy of the host's, in which it
 * keeps CAP_SYS_ADMIN and no other capability: enough for open_tree(2)
 * to copy a session directory for a spare (zygote.c), and for nothing
 * outside those two namespaces. 1 if so; 0 if the kernel refuses the
 * namespaces, or open_tree(2) (then no capability is kept either).
 * Single-threaded only.
 */
int ci_unshare_zygote(unsigned uid, unsigned gid);

/* 1 if @err is how a kernel or a container refuses a namespace (EPERM,
 * EINVAL, ENOSPC, EUSERS, EACCES, ENOSYS): the layer is skipped. */
int ci_ns_refused(int err);

/* New network, IPC and UTS namespaces, each one not in @have tried
 * alone; the CI_LAYER_*NS bits of those made. Needs CAP_SYS_ADMIN (root,
 * or inside our user namespace); refusals are skipped. */
uint32_t ci_unshare_others(uint32_t have);

/* ------------------------------------------------------------- tasks.c */

/* RLIMIT_NPROC at @tasks, soft and hard, if @have holds CI_LAYER_USERNS:
 * then only the worker's own tasks count. CI_LAYER_TASK_LIMIT if set, 0
 * without the user namespace; exits with CI_EXIT_RLIMIT if refused. Call
 * once isolated (ci_lockdown_start): no capability left. */
uint32_t ci_limit_tasks(uint32_t have, uint64_t tasks);

/* ------------------------------------------------------------- quota.c */

/* With a quota (@dev, the st_dev of the tmpfs the host mounted on the
 * session directory, not 0): checks that the session directory, the
 * parent of the cwd, is that tmpfs, and returns CI_LAYER_DISK_QUOTA;
 * exits with CI_EXIT_NAMESPACES if it is not, for a cell would then
 * write where the host does not look. 0 without one. */
uint32_t ci_check_disk_quota(uint64_t dev);

/* ------------------------------------------------------------ mounts.c */

/* A mount namespace whose root is a minimal read-only tmpfs (see
 * mounts.c), entered with pivot_root; the cwd is kept, and the session
 * directory is bound at its path (the parent of the cwd, every link
 * resolved: the host names it so, ci_workspace_create). CI_LAYER_MNTNS,
 * or 0 if it is in @have or the kernel refuses the namespace; any later
 * failure exits with CI_EXIT_NAMESPACES. Needs CAP_SYS_ADMIN (root, or
 * inside our user namespace); single-threaded only. */
uint32_t ci_mount_root(uint32_t have);

/* ci_mount_root() for a zygote's spare, before it has a session: the same
 * root entered at once, its tmpfs left writable and the cwd "/", so that
 * the unmount of the old root, which waits for every CPU to pass through
 * the scheduler, happens while no session waits. ci_mount_session() then
 * adds the session. CI_LAYER_MNTNS, or 0 as ci_mount_root(). */
uint32_t ci_mount_root_ahead(uint32_t have);

/* Moves @tree, a detached copy of the session directory made by the
 * zygote with open_tree(2), to @path (the host's name of it, every link
 * resolved) in the root ci_mount_root_ahead() entered, and makes the root
 * read-only. Exits with CI_EXIT_NAMESPACES on failure. @tree stays open. */
void ci_mount_session(int tree, const char *path);

/* -------------------------------------------------------------- init.c */

/* In pid 1 of a PID namespace (a no-op elsewhere): a handler for each
 * signal whose default action ends a process, which reports it and exits
 * as ci_init_die_by() does. Call after CPython has read the actions it
 * reports from signal.getsignal(), which stay SIG_DFL. */
void ci_init_signals(void);

/* Sends a SIGNALED frame naming @sig (async-signal-safe, never blocks),
 * then exits with status 128 + @sig: the end the kernel would give any
 * process but its namespace's init. */
_Noreturn void ci_init_die_by(int sig);

/* ------------------------------------------------------------ reaper.c */

/* For a session with rollback, in pid 1 of the PID namespace, single
 * threaded: forks the worker and stays behind as its reaper, never
 * returning. Returns 1 in the worker, 0 (doing nothing) without a PID
 * namespace of our own, where there is no rollback. */
int ci_reaper_start(void);

/* -------------------------------------------------------- checkpoint.c */

/* Before a cell whose RUN has CI_RUN_FLAG_CHECKPOINT, on the main
 * thread with no cell running: forks the checkpoint, a copy of the
 * worker that waits (the host approves the clone: seccomp.c). Returns 0
 * in the worker, also when the fork failed (the host, which approves
 * each clone, knows there is none); returns 1 in the checkpoint once the worker
 * has died and it is the worker in its place. */
int ci_checkpoint_make(void);

/* Once the cell has ended, before its RESULT goes: kills the checkpoint,
 * so a death after this point is not rolled back. 1 if one was made. */
int ci_checkpoint_drop(void);

/* Reaps the checkpoint ci_checkpoint_drop() killed if it is gone (the
 * next ci_checkpoint_make() waits for it); after the RESULT. */
void ci_checkpoint_reap(void);

/* ---------------------------------------------------------- manifest.c */

/* With --manifest, the policy text's descriptor (a sealed memfd). */
#define CI_FD_POLICY 4

/* Reads, checks and keeps the policy text on descriptor 4 (lib/manifest.h),
 * then closes it: a worker or zygote started with --manifest, before
 * its other descriptors are closed. Exits with CI_EXIT_MANIFEST. */
void ci_manifest_read(int fd);

/* The policy read, or NULL: no manifest, and nothing changes. */
const struct ci_manifest_policy *ci_manifest(void);

/* Hashes the listed files and looks for extra ones (ci_manifest_compare); the
 * first finding exits with CI_EXIT_MANIFEST naming its path. Once per
 * worker started by exec, once per zygote (its children inherit it). */
void ci_manifest_check_files(void);

/* 1 if @path is a listed file / if some listed file lies beneath the
 * directory @dir. */
int ci_manifest_listed(const char *path);
/* 1 if @data (@len bytes, read from @path) has the SHA-256 the manifest
 * lists for @path, 0 if it differs, -1 if @path is not listed. */
int ci_manifest_matches(const char *path, const void *data, size_t len);
int ci_manifest_listed_beneath(const char *dir);

/* 1 if the search-path directory number @i needs a bind of its own in a
 * new root that binds /usr (it is elsewhere, or on another mount). */
int ci_manifest_needs_bind(size_t i);

/* A Landlock rule of the manifest's plan: read the directory (a
 * hierarchy) or the file at @path, through @fd if it is not -1. */
#define CI_MANIFEST_READ_FILE 1u
#define CI_MANIFEST_READ_DIR 2u
struct ci_manifest_rule {
    char *path;
    int fd;          /* an O_PATH descriptor held by the zygote, or -1 */
    int follow;      /* open following a final link (a listed link) */
    unsigned access; /* CI_MANIFEST_READ_* */
};

/*
 * The read rules that replace the whole-directory rules of @dirs (the
 * system directories Landlock would grant read-only) wherever one holds
 * a search-path directory: those of @dirs it carves are flagged in
 * @carved. Computed once (a zygote's children inherit it); *@n rules.
 */
const struct ci_manifest_rule *ci_manifest_plan(const char *const *dirs, size_t n_dirs,
                                          int *carved, size_t *n);

/* In the zygote: opens each rule's path once (O_PATH), so its children
 * add the rules without looking a path up. */
void ci_manifest_hold(void);

/* ----------------------------------------------------------- seccomp.c */

/* Builds the seccomp filter of the rule table, and the pid filter of
 * pid 1, as BPF, once; a zygote does it before it forks. Exits with
 * CI_EXIT_SECCOMP on failure. */
void ci_seccomp_prepare(void);

/* Loads on every thread the pid filter (kill and tgkill kept to this
 * process, two socket options refused, fork refused; prepared for pid 1,
 * built for any other), then the table's (preparing both if need be);
 * exits with CI_EXIT_SECCOMP on failure. Must come after
 * PR_SET_NO_NEW_PRIVS. With @rollback (a worker under a reaper) the pid
 * filter keeps kill and tgkill to the namespace's pids from 2 up (the
 * worker, its checkpoint) and sends each fork to a listener instead: its
 * descriptor is returned, for the host to take and approve the
 * checkpoint's fork alone (docs/rollback.md); -1 otherwise. */
int ci_seccomp_load(int rollback);

#endif /* CI_WORKER_H */
