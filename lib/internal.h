/*
 * Host-side internals shared by the host library's sources. Never
 * installed, never included by the worker.
 */
#ifndef CI_INTERNAL_H
#define CI_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "codeinterp.h"
#include "proto.h"
#include "worker_start.h"

/* A host function (ci_config_add_function, functions.c). */
struct ci_function {
    char *name;
    char *description; /* NULL: none */
    ci_function_fn fn;
    void *payload;
};

struct ci_config {
    unsigned long timeout_ms;
    unsigned long grace_ms;
    unsigned long startup_ms;
    unsigned long long memory_limit;
    unsigned long long file_limit;
    unsigned long cpu_limit_s; /* a worker's CPU time after its start; 0: none */
    size_t output_limit;
    unsigned long long spill_limit; /* one cut stream's spill file; 0: none */
    size_t display_output_limit; /* one rich output's data */
    size_t display_run_limit;    /* all of a run's rich outputs' data */
    unsigned figure_dpi;
    unsigned required_layers; /* CI_SANDBOX_* */
    char *workspace_root; /* NULL: $TMPDIR, else /tmp */
    char *preload;        /* NULL: CI_DEFAULT_PRELOAD */
    int zygote;           /* 1: fork workers from a warm zygote (zygote.c) */
    char *manifest;       /* NULL: no package manifest (manifest_cache.c) */
    char *manifest_key_path; /* NULL: manifest_key holds the key */
    unsigned char manifest_key[32];
    struct ci_function *functions; /* in the order added */
    size_t function_count;
    size_t call_args_limit;   /* a CALL's JSON arguments (bytes) */
    size_t call_result_limit; /* a host function's JSON value (bytes) */
};

void ci_config_defaults(struct ci_config *cfg);
/* Deep copy (the root string); CI_OK or CI_ENOMEM. */
int ci_config_copy(struct ci_config *dst, const struct ci_config *src);
void ci_config_clear(struct ci_config *cfg);
/* The modules a worker imports before READY, never NULL. */
const char *ci_config_preload(const struct ci_config *cfg);

/* functions.c: host functions. */
/* Deep copy of @src's functions into @dst (whose own are not freed);
 * CI_OK, or CI_ENOMEM with what was copied left for ci_functions_clear. */
int ci_functions_copy(struct ci_config *dst, const struct ci_config *src);
void ci_functions_clear(struct ci_config *cfg);
/* The function named by the @len bytes at @name, or NULL. */
const struct ci_function *ci_function_find(const struct ci_config *cfg, const char *name,
                                           size_t len);
/* The FUNCTIONS payload (proto.h) of @cfg's functions in *@out
 * (malloc'ed), *@len bytes. CI_OK or CI_ENOMEM. */
int ci_functions_frame(const struct ci_config *cfg, unsigned char **out, size_t *len);
/* The largest CALL payload a worker under @cfg may send. */
size_t ci_call_frame_cap(const struct ci_config *cfg);
/* A CALL payload (proto.h), checked: 0 with the function in *@fn and the
 * arguments' JSON at @p + *@args_at, or -1 with @why (a static sentence). */
int ci_call_parse(const unsigned char *p, size_t len, const struct ci_config *cfg,
                  const struct ci_function **fn, size_t *args_at, const char **why);

/* The answer a host function's callback gives (ci_reply_json,
 * ci_reply_error): the CALL_REPLY's status and what follows it. */
struct ci_reply {
    ci_session *s;
    const char *function;
    size_t result_limit;
    int answered;
    uint32_t status; /* CI_CALL_* */
    char *data;      /* the reply's bytes after its status */
    size_t len;
    char failure[256]; /* why an answer was refused, told to the cell if none is given */
};
void ci_reply_init(ci_reply *reply, ci_session *s, const char *function);
/* After the callback: a reply without an answer becomes CI_CALL_FAILED
 * saying why (data may then be NULL when memory ran out). */
void ci_reply_finish(ci_reply *reply);
void ci_reply_clear(ci_reply *reply);

/*
 * manifest_cache.c: a verified package manifest, shared by the sessions
 * and the zygote that use it. The policy text (lib/manifest.h) is what a
 * worker is given on its descriptor 4.
 */
struct ci_manifest_verified {
    unsigned char digest[32]; /* SHA-256 of the manifest's canonical bytes */
    char *text;
    size_t len;
    int refs; /* under manifest_cache.c's lock */
};

/* The verified manifest @cfg names, verifying it unless the file and key
 * are those of one verified before. CI_OK and a reference in *@out (put it
 * back with ci_manifest_cache_put), CI_EMANIFEST or CI_ENOMEM with @msg. */
int ci_manifest_cache_get(const struct ci_config *cfg, struct ci_manifest_verified **out,
                          char *msg, size_t msglen);
void ci_manifest_cache_put(struct ci_manifest_verified *p);
/* A sealed memfd holding @p's text at offset 0, close-on-exec; -1 with errno. */
int ci_manifest_policy_memfd(const struct ci_manifest_verified *p);
/* The message for a worker or zygote that exited with
 * CI_WORKER_EXIT_MANIFEST, from what it wrote on stderr (@err, NULL if
 * nothing). */
void ci_manifest_refusal(char *msg, size_t msglen, const char *err);

/* A live worker's handles; pid <= 0 means none. */
struct ci_worker {
    pid_t pid;
    int pidfd;   /* readable when the worker has exited */
    int procfd;  /* O_PATH /proc/<pid>, held only to pin its dentry (spawn.c) */
    int channel; /* frames (proto.h), non-blocking */
    int out;     /* the worker's fd 1, non-blocking read end */
    int err;     /* the worker's fd 2, non-blocking read end */
    int status;     /* /proc/<pid>/status, opened on first use (usage.c) */
    int clear_refs; /* /proc/<pid>/clear_refs; -1 until opened, -2 if denied */
    int cpu_clock_known;  /* 1: cpu_clock is its CPU clock; 0 not asked yet; -1 none */
    clockid_t cpu_clock;  /* clock_getcpuclockid(3) of pid, asked once (usage.c) */
    unsigned layers; /* CI_SANDBOX_* bits it reported in READY */
    int signaled;    /* the signal a SIGNALED frame named (proto.h), or 0 */
    int exit_code;   /* its exit status once reaped, if it exited; else -1 */
    int functions_sent; /* 1 once it was sent the FUNCTIONS frame */
    int paused;         /* 1 while stopped between cells (cpu.c) */
    unsigned long long cpu_limit_s; /* its RLIMIT_CPU (seconds), 0: none */
};

/* A regular file of the workspace as stat(2) saw it (changes.c). */
struct ci_file_state {
    char *name; /* relative to the workspace */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};

/* The workspace's regular files at one moment, sorted by name. */
struct ci_snapshot {
    struct ci_file_state *files;
    size_t count;
    int valid;      /* 0: none taken, or the workspace changed since */
    int incomplete; /* the scan stopped at a limit or an unreadable directory */
    struct timespec newest; /* the latest ctime seen */
};

/* The longest timeout a session or a run may have: a day, in ms
 * (ci_config_set_timeout_ms, ci_run_ex). */
#define CI_TIMEOUT_MAX_MS 86400000UL

/* spill.c */
#define CI_SPILL_KEEP 8      /* spill files a session keeps */
#define CI_SPILL_NAME_MAX 32 /* "cell-2147483647.stdout" and its NUL fit */
#define CI_SPILL_MS 100      /* the most time a run spends writing one */
#define CI_SPILL_BUF 65536   /* gathered before a write */
struct ci_spill_kept {       /* a spill file the session keeps */
    char name[CI_SPILL_NAME_MAX];
    dev_t dev;
    ino_t ino;
};

struct ci_session {
    struct ci_config cfg;
    char *dir;       /* <root>/codeinterp-XXXXXX, removed by ci_session_free */
    char *workspace; /* <dir>/workspace, the cell's working directory */
    int workspace_fd; /* O_PATH descriptor of the workspace */
    int64_t start_deadline; /* ci_now_ms() by which the worker's start ends */
    dev_t dir_dev;    /* of s->dir, as made */
    ino_t dir_ino;
    int lock_fd;      /* <dir>/lock, flock()ed while the session lives (files.c) */
    struct ci_worker worker;
    int execution_count;
    unsigned long long last_run_us; /* the last run's wall time; 0 before any */
    atomic_int busy;
    int run_seq;              /* runs so far, across restarts */
    atomic_int running;       /* the running run's run_seq, or 0 */
    atomic_int interrupt_for; /* the run ci_session_interrupt() asked to stop */
    int wake_fd;              /* eventfd: wakes a run to see that request */
    struct ci_snapshot files; /* the workspace after the last run */
    struct ci_manifest_verified *policy; /* its package manifest's, or NULL (manifest_cache.c) */
    struct ci_spill_kept spills[CI_SPILL_KEEP]; /* oldest first */
    int spill_count;
    char errmsg[1024];
};

struct ci_buf {
    char *data; /* NUL-terminated when not NULL */
    size_t len;
};

/* One rich output (codeinterp.h); mime, data and display_id are
 * NUL-terminated. */
struct ci_output {
    uint32_t type;    /* ci_output_type */
    uint32_t message; /* the message's number in the run */
    uint32_t flags;   /* CI_OUTPUT_FLAG_* */
    char *mime;       /* "" for a clear_output */
    unsigned char *data;
    size_t len;
    char *display_id; /* NULL when the message has none */
};

struct ci_result {
    ci_status status;
    int execution_count;
    int truncated; /* CI_TRUNCATED_* */
    struct ci_buf out, err;
    char *spill_files[2]; /* of stdout and stderr, when cut and kept */
    int spill_partial[2]; /* the spill limit stopped it */
    struct ci_cut {       /* of stdout and stderr, when cut */
        size_t at, len;   /* the marker line in out or err */
        unsigned long long bytes, lines; /* what it says was left out */
    } cuts[2];
    char *value, *error_name, *error_value, *traceback;
    char *traceback_full; /* NULL unless it differs from traceback */
    struct ci_output *outputs;
    size_t output_count, outputs_omitted;
    char **files; /* changed files, sorted */
    size_t file_count;
    unsigned long long wall_us, cpu_us, peak_memory;
};

/* errors.c */
void ci_set_errmsg(ci_session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ci_set_thread_errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* @bytes as a limit is named: "1 MiB", "1.5 GiB", "1.46 KiB", "1000
 * bytes" (two decimals at most; outputs.size() in the worker agrees). */
void ci_format_size(char *out, size_t size, unsigned long long bytes);

/* A monotonic clock in milliseconds; every deadline is on it. */
static inline int64_t ci_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Closes *@fd unless it is -1 and sets it to -1, so a cleanup path may
 * close every handle it holds, open or not. */
static inline void ci_close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* The same clock in microseconds, for spins. */
static inline int64_t ci_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* spawn.c: starts the worker of session @s, forked by a zygote or by
 * fork + exec, and fills s->worker. CI_OK or CI_ESPAWN (@msg says why). */
int ci_spawn_worker(ci_session *s, char *msg, size_t msglen);
/* 1 if @s's workers are forked from a zygote: the config says so and
 * $CODEINTERP_WORKER is not set. */
int ci_uses_zygote(const ci_session *s);

/* $CODEINTERP_WORKER, or the built-in path of codeinterp-worker. */
const char *ci_worker_path(void);
/* fork + exec of the worker program with @argv, the descriptors @fds as
 * its 0..3 and *@policy, unless it is -1, as its 4 (each renumbered in
 * place above 4; the caller still closes them), the environment of the
 * session directory @dir and <dir>/workspace as its working directory.
 * The child's pid, or -1 with @msg. */
pid_t ci_exec_worker(char *const argv[], const char *dir, int fds[4], int *policy, char *msg,
                     size_t msglen);

/* The longest workspace root, configured or resolved (bytes): the
 * session directory's paths must stay well within PATH_MAX. */
#define CI_WORKSPACE_ROOT_MAX 3000

/* zygote.c: a worker for @s forked by the warm zygote for its preload
 * list (started if none is alive), with @fds as its 0..3. The worker's
 * pid (the host's child), or -1 with @msg and an error in *@rc
 * (CI_EMANIFEST when the zygote found the installed files differ from
 * the manifest); then *@retry is 1 if the zygote died on the way, so
 * another try (with new descriptors) may succeed with a new one, and
 * *@by_exec 1 if the zygote cannot see the session directory (a mount
 * made after it started, where mounts do not propagate), so the worker
 * is for fork + exec to start, with the same descriptors. */
pid_t ci_zygote_spawn(ci_session *s, int fds[4], char *msg, size_t msglen, int *retry,
                      int *by_exec, int *rc);
/* Kills and reaps every zygote of this process (the tests use it to see
 * that nothing else is left); the next session starts a new one. */
void ci_zygote_stop_all(void);

/* session.c: the worker's lifetime as seen from the host. */
/* No worker: every handle -1. */
void ci_worker_init(struct ci_worker *w);
int ci_worker_start(ci_session *s);
/* 1 if the live worker @w has exited (its pidfd is readable, or waitid(2)
 * with WNOWAIT says so), without reaping it: ci_worker_reap reaps. */
int ci_worker_exited(const struct ci_worker *w);
/* Waits until @deadline_ms for the READY of @w, a session's worker or
 * (@packets: its channel is SOCK_SEQPACKET, a frame a message) a zygote,
 * keeping the start of its stderr (w->err) to explain a failure: an
 * import error, a lockdown step the kernel refused. CI_OK with
 * w->layers; else @w is killed and reaped, and @msg says why, naming it
 * @who: CI_EMANIFEST (it exited with CI_WORKER_EXIT_MANIFEST: the
 * installed files are not the manifest's), CI_EPROTO (its first message
 * was no READY), CI_ENOMEM or CI_ESPAWN. */
int ci_ready_wait(struct ci_worker *w, int64_t deadline_ms, int packets, const char *who,
                  char *msg, size_t msglen);
/* SIGKILL, reap, close every handle. Safe on a worker that is gone. */
void ci_worker_stop(struct ci_worker *w);
/* Reaps an exiting worker, waiting until @deadline_ms at most, then kills
 * it. Describes its end in @name/@value (static name, formatted value).
 * 1 if it had to kill it (one already exiting does not count), else 0. */
int ci_worker_reap(struct ci_worker *w, int64_t deadline_ms, const char **name,
                   char *value, size_t valuelen);

/* files.c */
/* Gives @name in @dirfd ("" for @dirfd itself) to the worker's uid when
 * the host is root, since the worker is not; else a no-op. 0 or -1. */
int ci_give_to_worker(int dirfd, const char *name);
/* Creates a new file of a random name (.ci-put-XXXXXXXXXXXXXXXX, in @tmp
 * of @size bytes, at least 32) in @dirfd, mode 0600: a cell can see the
 * workspace and must not be able to block the host by planting the names
 * it would use. The descriptor, or -1 with errno. */
int ci_create_temp(int dirfd, char *tmp, size_t size);

/* resolve.c: opening a name below @dirfd without following a symbolic
 * link or leaving @dirfd: openat2(2) RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
 * | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, or, where openat2 is missing
 * (ENOSYS: Linux before 5.6, valgrind), a walk one component at a time
 * with O_NOFOLLOW. @name must pass ci_name_beneath_valid() (else EINVAL).
 * The descriptor, or -1 with errno (ELOOP: a link on the path; ENOTDIR;
 * EXDEV: another filesystem). */
int ci_open_beneath(int dirfd, const char *name, int flags, mode_t mode);
/* The walk alone, whatever the kernel has: for the tests. */
int ci_open_beneath_fallback(int dirfd, const char *name, int flags, mode_t mode);
/* 1 if @name is relative, shorter than PATH_MAX, and has no empty, "." or
 * ".." component (nor a trailing slash). */
int ci_name_beneath_valid(const char *name);

/* files.c: the session directory and its workspace. */
int ci_workspace_create(ci_session *s);
/* Replaces config/ and tmp/ with empty ones before a new worker starts:
 * the worker reads its HOME and MPLCONFIGDIR before it locks itself down,
 * and an earlier cell may have planted files there. CI_OK or CI_EIO. */
int ci_workspace_renew(ci_session *s);
void ci_workspace_remove(ci_session *s);

/* channel.c: frames over the socketpair. */
struct ci_reader {
    unsigned char header[sizeof(struct ci_frame_header)];
    size_t header_have;
    uint32_t type, len;
    unsigned char *payload;
    size_t have;
    size_t max_len; /* frames longer than this are a protocol error */
};
void ci_reader_init(struct ci_reader *rd, size_t max_len);
void ci_reader_reset(struct ci_reader *rd);
/* Reads what is available from @fd. Returns 1 when a whole frame is in
 * rd (type, len, payload), 0 when more is needed (EAGAIN), -1 on EOF or
 * error (errno set; 0 for EOF), -2 when the frame is over max_len. */
int ci_reader_pump(struct ci_reader *rd, int fd);
/* The same, reading through @fn (read(2)'s contract: bytes, 0 at EOF, -1
 * with errno), so the fuzz target can drive the reader from memory. */
typedef ssize_t ci_read_fn(void *ctx, void *buf, size_t n);
int ci_reader_pump_from(struct ci_reader *rd, ci_read_fn *fn, void *ctx);
/* read(2) on the descriptor *(int *)@fd: ci_reader_pump's ci_read_fn. */
ssize_t ci_read_fd(void *fd, void *buf, size_t n);
/* A READY payload (proto.h): 0 and *@layers if it is well formed, else -1. */
int ci_ready_parse(const unsigned char *p, size_t len, unsigned *layers);
/* A VIOLATION payload (proto.h): 0 and the syscall's name in @name if it
 * is well formed, else -1 with @why (@name untouched). */
/* A SIGNALED frame's payload: 0 with the signal in @sig, or -1 with
 * @why (a static sentence). */
int ci_signaled_parse(const unsigned char *p, size_t len, int *sig, const char **why);
int ci_violation_parse(const unsigned char *p, size_t len,
                       char name[CI_VIOLATION_NAME_MAX + 1], const char **why);
/* An INPUT_REQUEST payload (proto.h): 0 with its flags in *@flags, the
 * prompt at @p + 4 (@len - 4 bytes), or -1 with @why. */
int ci_input_request_parse(const unsigned char *p, size_t len, uint32_t *flags,
                           const char **why);
/* Writes a whole frame of two payload parts to non-blocking @fd before
 * @deadline_ms, draining @drain (the output pipes) meanwhile so a worker
 * blocked on a full pipe cannot stall us. 0, or -1 with errno (ETIMEDOUT,
 * EPIPE...). */
struct ci_drain;
int ci_send_frame(int fd, uint32_t type, const void *a, size_t alen,
                  const void *b, size_t blen, int64_t deadline_ms,
                  struct ci_drain *drain);

/* spill.c: the whole of a cut stream, in workspace/.outputs/. */
struct ci_spill {
    int fd;   /* the file being written, -1 */
    int dir;  /* .outputs, -1 */
    char tmp[32];
    unsigned long long written;
    unsigned long long room; /* half of what an unprivileged user may write */
    int64_t write_us;        /* spent writing it */
    char *pend;              /* CI_SPILL_BUF bytes gathered for a write */
    size_t pend_len;
    int full; /* it reached the spill limit */
    int slow; /* given up after CI_SPILL_MS */
    int err;  /* errno of what stopped it, 0 */
};
void ci_spill_init(struct ci_spill *sp);
/* Creates workspace/.outputs (if needed) and a new file in it. 0, or -1
 * with sp->err. */
int ci_spill_begin(struct ci_spill *sp, int workspace_fd);
/* Appends what fits under @cap bytes; a failed write gives up the file. */
void ci_spill_write(struct ci_spill *sp, const char *data, size_t n, unsigned long long cap);
/* Closes the file and renames it to .outputs/cell-@count.stdout (or
 * .stderr), whose workspace-relative name goes to @name; the session,
 * unless NULL, keeps it among its last CI_SPILL_KEEP. 0, or -1 (nothing
 * kept, sp->err says why). */
int ci_spill_end(struct ci_spill *sp, ci_session *s, int count, int stream, char *name,
                 size_t size);

/* output.c: draining the worker's stdout/stderr into capped buffers. */
struct ci_stream {
    int fd;                          /* -1 when closed */
    struct ci_buf *buf;              /* NULL: read and discard */
    unsigned long long total, lines; /* bytes and line breaks read */
    size_t given;                    /* bytes of buf passed to the callback */
    int64_t partial_since;           /* when a partial line began to wait, 0 */
    int cut;                         /* past the cap: buf is the head */
    char *tail;                      /* once cut: a ring of the last bytes */
    size_t tail_len, tail_end;
    struct ci_spill spill;
};
struct ci_drain {
    struct ci_stream s[2]; /* stdout, stderr */
    size_t cap;
    int *truncated;   /* gets CI_TRUNCATED_STDOUT/STDERR; may be NULL */
    ci_output_fn fn;  /* is given what buf keeps, in whole lines; may be NULL */
    void *payload;
    int spill_dir;    /* the workspace; -1: a cut stream is not kept whole */
    unsigned long long spill_cap;
    ci_session *session; /* keeps the spill files; may be NULL */
    int count;           /* the cell's number, in the spill files' names */
};
/* No callback and no spill file until the caller sets them. */
void ci_drain_init(struct ci_drain *d, int out, int err, struct ci_buf *out_buf,
                   struct ci_buf *err_buf, size_t cap, int *truncated);
/* Reads whatever is available on either pipe; never blocks. 0, or -1 when
 * memory ran out. */
int ci_drain_pipes(struct ci_drain *d);
/* Reads one pipe, at most 1 MiB; 0 when done for now, 1 on EOF (the fd
 * set to -1), -1 on ENOMEM. */
int ci_drain_one(struct ci_drain *d, int i);
/* When (ci_now_ms) a partial line is due to go to the callback, or
 * INT64_MAX; ci_drain_give_partial() passes on those due at @now. */
int64_t ci_drain_partial_due(const struct ci_drain *d);
void ci_drain_give_partial(struct ci_drain *d, int64_t now);
/* The run is over: passes on what waits, renames the spill files and
 * joins each cut stream's head, marker and tail; @r (may be NULL) gets
 * the spill files' names and where the markers are. Must be called once
 * for every drain that has buffers. */
void ci_drain_finish(struct ci_drain *d, ci_result *r);

/* result.c */
ci_result *ci_result_new(void);
/* Decodes a RESULT payload from the untrusted worker into @r: checks every
 * tag, length and byte against @cfg's limits. CI_OK, CI_EPROTO (with @why
 * set), or CI_ENOMEM. */
int ci_result_decode(ci_result *r, const unsigned char *p, size_t len,
                     const struct ci_config *cfg, uint32_t *outcome, uint32_t *count,
                     const char **why);
/* The largest RESULT payload a worker under @cfg may send. */
size_t ci_result_frame_cap(const struct ci_config *cfg);
/* Frees @r's outputs and forgets they were omitted. */
void ci_result_drop_outputs(ci_result *r);
/* Strict UTF-8 (RFC 3629) without NUL bytes: 1 if valid. */
int ci_utf8_valid(const unsigned char *p, size_t n);
char *ci_strdup(const char *s);

/* changes.c: which workspace files a run created or modified. */
/* Scans the workspace into @snap (replacing what it held), stopping at
 * @deadline_ms (ci_now_ms), 100000 entries or 8 MiB of names. CI_OK or
 * CI_ENOMEM; an unreadable part or a limit only makes it incomplete. */
int ci_snapshot_take(int workspace_fd, struct ci_snapshot *snap, int64_t deadline_ms);
void ci_snapshot_clear(struct ci_snapshot *snap);
/* Waits, at most 50 ms, until a file written now would get a change time
 * later than any in @snap, so a rewrite of the same size is still seen. */
void ci_snapshot_settle(const struct ci_snapshot *snap);
/* Fills r->files with the regular files of @after that are not in
 * @before or differ from it. CI_OK or CI_ENOMEM. */
int ci_snapshot_diff(const struct ci_snapshot *before, const struct ci_snapshot *after,
                     ci_result *r);

/* usage.c: the worker's resources, read from the host side. */
struct ci_usage {
    int64_t start_ns; /* CLOCK_MONOTONIC */
    int64_t cpu_ns;   /* the worker's CPU clock, -1 if unreadable */
};
/* Resets the worker's peak RSS where allowed, and notes the clocks. */
void ci_usage_begin(struct ci_worker *w, struct ci_usage *u);
/* Fills r->wall_us, and r->cpu_us and r->peak_memory while the worker lives. */
void ci_usage_end(struct ci_worker *w, const struct ci_usage *u, ci_result *r);
/* The worker's CPU time, all its threads, in ns; -1 if unreadable. */
int64_t ci_worker_cpu_ns(struct ci_worker *w);

/* cpu.c: the worker's CPU, held to its cells. */
/* Stops every thread of the live worker @w (SIGSTOP) once its cell has
 * ended, so a thread the cell left running uses no CPU until the next
 * cell; a no-op on one that is gone or already stopped. */
void ci_worker_pause(struct ci_worker *w);
/* Lets a stopped worker run again (SIGCONT): before anything is sent to
 * it. A no-op on one that runs. */
void ci_worker_resume(struct ci_worker *w);
/* Checks that the ready worker @w set its RLIMIT_CPU, soft and hard, to
 * @seconds on top of the whole seconds its start used (nothing to check
 * for 0), and notes it in w->cpu_limit_s. CI_OK, or CI_ESPAWN with @msg. */
int ci_worker_check_cpu_limit(struct ci_worker *w, unsigned long seconds, char *msg,
                              size_t msglen);
/* 1 if a worker that ended with wait status @st after @cpu_us of CPU time
 * was killed by the kernel at its CPU limit. */
int ci_worker_cpu_limited(const struct ci_worker *w, int st, unsigned long long cpu_us);

#endif /* CI_INTERNAL_H */
