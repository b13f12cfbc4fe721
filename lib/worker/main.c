/*
 * codeinterp-worker: one session's Python interpreter.
 *
 *   codeinterp-worker --parent PID --memory BYTES --fsize BYTES
 *                     --output-limit BYTES --display-limit BYTES
 *                     --display-run-limit BYTES --dpi N --tasks N --quota-dev DEV
 *                     --cpu SECONDS
 *                     --preload MODULES [--manifest]
 *   codeinterp-worker --zygote --parent PID --preload MODULES [--manifest]
 *
 * The host starts it with the descriptors of lib/proto.h, as a session's
 * worker or as a zygote (zygote.c) that forks them; a zygote's child
 * takes the same path as a worker from "tie itself to the host" on, its
 * interpreter already warm. With --manifest, the policy text of a signed
 * package manifest is on descriptor 4 (lib/manifest.h, manifest.c): its
 * files are checked before CPython starts, CPython imports only what it
 * lists, and Landlock reads only that. A worker's life, in
 * order: check the command line and descriptors, tie itself to the host,
 * isolate itself (namespaces, never root, no capabilities) while it has
 * one thread, start the watchdog thread, warm CPython with SIGINT
 * blocked, lock itself down, say READY, then run one cell per RUN frame
 * until the host closes the channel.
 *
 * The isolation comes before any thread because unshare(CLONE_NEWUSER)
 * refuses a multithreaded process, and before Python so that no module's
 * import code ever runs as root.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto.h"
#include "zygote_proto.h"
#include "thread.h"
#include "worker.h"

/* Four text fields of output_limit bytes each, and the outputs, must fit
 * a u32 frame with the small fields (9 headers, 4 u32s). */
#define MAX_OUTPUT_LIMIT (512u * 1024 * 1024)
#define MAX_DISPLAY_LIMIT (1024u * 1024 * 1024)
_Static_assert(4ull * MAX_OUTPUT_LIMIT + CI_OUTPUTS_MAX(MAX_DISPLAY_LIMIT) + 9 * 8 + 4 * 4
               <= UINT32_MAX, "a RESULT could overflow its u32 length");

/* As ci_config_set_figure_dpi() bounds it. */
#define MIN_DPI 10
#define MAX_DPI 600

struct args {
    pid_t parent;
    int zygote;
    int manifest; /* --manifest: the policy is on CI_FD_POLICY */
    int rollback; /* the request's CI_SPAWN_FLAG_ROLLBACK; then 1 under a reaper */
    struct ci_limits limits;
};

_Noreturn void ci_fatal(enum ci_exit code, const char *fmt, ...)
{
    va_list ap;

    fputs("codeinterp-worker: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    _exit(code);
}

static _Noreturn void usage(const char *why)
{
    ci_fatal(CI_EXIT_USAGE, "%s\nusage: codeinterp-worker --parent PID "
             "--memory BYTES --fsize BYTES --output-limit BYTES "
             "--display-limit BYTES --display-run-limit BYTES --dpi N --tasks N --quota-dev DEV "
             "--cpu SECONDS "
             "--preload MODULES [--manifest]\n       codeinterp-worker --zygote --parent PID "
             "--preload MODULES [--manifest]", why);
}

/* A decimal number from @min to @max: one digit or more, no sign, no
 * spaces. */
static uint64_t parse_number(const char *opt, const char *s, uint64_t min, uint64_t max)
{
    uint64_t v = 0;

    if (!*s)
        goto bad;
    for (const char *p = s; *p; p++) {
        unsigned d = (unsigned)(*p - '0');

        if (d > 9 || v > (max - d) / 10)
            goto bad;
        v = v * 10 + d;
    }
    if (v >= min)
        return v;
bad:
    ci_fatal(CI_EXIT_USAGE, "%s wants a decimal number from %llu to %llu, "
             "not '%s'", opt, (unsigned long long)min, (unsigned long long)max, s);
}

enum { PARENT, MEMORY, FSIZE, OUTPUT, DISPLAY, DISPLAY_RUN, DPI, TASKS, QUOTA_DEV, CPU, N_NUMBERS };
static const struct {
    const char *name;
    uint64_t min, max;
} number_opt[N_NUMBERS] = {
    [PARENT] = {"--parent", 1, INT_MAX},
    [MEMORY] = {"--memory", 1, INT64_MAX},
    [FSIZE] = {"--fsize", 1, INT64_MAX},
    [OUTPUT] = {"--output-limit", 1, MAX_OUTPUT_LIMIT},
    [DISPLAY] = {"--display-limit", 1, MAX_DISPLAY_LIMIT},
    [DISPLAY_RUN] = {"--display-run-limit", 1, MAX_DISPLAY_LIMIT},
    [DPI] = {"--dpi", MIN_DPI, MAX_DPI},
    [TASKS] = {"--tasks", CI_TASK_LIMIT_MIN, CI_TASK_LIMIT_MAX},
    [QUOTA_DEV] = {"--quota-dev", 0, UINT64_MAX},
    [CPU] = {"--cpu", 0, CI_CPU_LIMIT_MAX_S},
};

/* Checks each number against its option's range and sets the limits, as
 * the command line gives them or a zygote's SPAWN request. */
static void set_limits(struct args *a, const uint64_t val[N_NUMBERS])
{
    for (int k = 0; k < N_NUMBERS; k++)
        if (val[k] < number_opt[k].min || val[k] > number_opt[k].max)
            ci_fatal(CI_EXIT_USAGE, "%s wants a number from %llu to %llu, not %llu",
                     number_opt[k].name, (unsigned long long)number_opt[k].min,
                     (unsigned long long)number_opt[k].max, (unsigned long long)val[k]);
    /* One output over the run's cap could never be kept. */
    if (val[DISPLAY] > val[DISPLAY_RUN])
        usage("--display-limit is over --display-run-limit");
    a->parent = (pid_t)val[PARENT];
    a->limits.memory = val[MEMORY];
    a->limits.fsize = val[FSIZE];
    a->limits.output_limit = (size_t)val[OUTPUT];
    a->limits.display_limit = (size_t)val[DISPLAY];
    a->limits.display_run_limit = (size_t)val[DISPLAY_RUN];
    a->limits.dpi = (unsigned)val[DPI];
    a->limits.tasks = val[TASKS];
    a->limits.quota_dev = val[QUOTA_DEV];
    a->limits.cpu = val[CPU];
}

/* The zygote's command line, or a worker's: every option once; --zygote
 * first if at all, and --manifest anywhere. */
static void parse_args(int argc, char **argv, struct args *a)
{
    uint64_t val[N_NUMBERS] = {0};
    int seen[N_NUMBERS] = {0}, i, n_opts = 0;
    int zygote = argc > 1 && strcmp(argv[1], "--zygote") == 0;
    const char *preload = NULL;

    memset(a, 0, sizeof *a);
    for (i = 1 + zygote; i < argc; i += 2) {
        int k = 0;

        if (strcmp(argv[i], "--manifest") == 0) {
            if (a->manifest++)
                usage("an option is given twice");
            i--; /* it takes no value */
            continue;
        }
        if (i + 1 >= argc)
            usage("wrong number of arguments");
        n_opts++;
        if (strcmp(argv[i], "--preload") == 0) {
            if (preload)
                usage("an option is given twice");
            preload = argv[i + 1];
            if (!ci_preload_valid(preload))
                usage("--preload wants module names separated by commas");
            continue;
        }
        while (k < N_NUMBERS && strcmp(argv[i], number_opt[k].name) != 0)
            k++;
        if (k == N_NUMBERS || (zygote && k != PARENT))
            usage("unknown option");
        if (seen[k]++)
            usage("an option is given twice");
        val[k] = parse_number(number_opt[k].name, argv[i + 1], number_opt[k].min,
                              number_opt[k].max);
    }
    if (n_opts != (zygote ? 2 : N_NUMBERS + 1))
        usage("wrong number of arguments");
    if (!preload)
        usage("--preload is missing");
    a->zygote = zygote;
    a->limits.preload = preload;
    if (zygote) {
        a->parent = (pid_t)val[PARENT];
        return;
    }
    set_limits(a, val);
}

/* Blanks the options in place once parsed: /proc/self/cmdline reads
 * them from our memory, and a cell would find the host's pid there
 * (--parent), which its PID namespace otherwise hides. The preload list
 * moves to the heap first. */
static void wipe_args(int argc, char **argv, struct args *a)
{
    if (!(a->limits.preload = strdup(a->limits.preload)))
        ci_fatal(CI_EXIT_USAGE, "out of memory");
    for (int i = 1; i < argc; i++)
        memset(argv[i], 0, strlen(argv[i]));
}

/* A zygote's child: its limits from the request, checked as the command
 * line's would be. */
static void limits_from_request(struct args *a, const struct ci_spawn_request *r)
{
    uint64_t val[N_NUMBERS] = {
        [PARENT] = (uint64_t)a->parent, [MEMORY] = r->memory, [FSIZE] = r->fsize,
        [OUTPUT] = r->output_limit, [DISPLAY] = r->display_limit,
        [DISPLAY_RUN] = r->display_run_limit, [DPI] = r->dpi, [TASKS] = r->tasks,
        [QUOTA_DEV] = r->quota_dev, [CPU] = r->cpu,
    };

    set_limits(a, val);
}

static void check_descriptors(void)
{
    for (int fd = CI_FD_STDIN; fd <= CI_FD_CHANNEL; fd++)
        if (fcntl(fd, F_GETFD) < 0)
            ci_fatal(CI_EXIT_DESCRIPTORS, "descriptor %d is not open", fd);
    /* Anything else would be a host's leak, perhaps another session's
     * channel: a cell must not inherit it. */
    if (close_range(CI_FD_CHANNEL + 1, ~0u, 0) != 0)
        ci_fatal(CI_EXIT_DESCRIPTORS, "close_range: %s", strerror(errno));
}

static void set_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    int err = pthread_sigmask(how, set, old);

    if (err)
        ci_fatal(CI_EXIT_SIGMASK, "pthread_sigmask: %s", strerror(err));
}

/* Exits as soon as the host's end of the channel closes, even while a
 * cell keeps the main thread busy. Only hang-ups wake it: frames (POLLIN)
 * are the main thread's business. */
static void *watchdog(void *unused)
{
    struct pollfd p = {.fd = CI_FD_CHANNEL, .events = POLLRDHUP};

    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
    _exit(CI_EXIT_HOST_GONE);
}

/* Its signals blocked, so SIGINT always goes to the main thread. */
static void start_watchdog(void)
{
    int err = ci_thread_start_masked(watchdog, NULL);

    if (err)
        ci_fatal(CI_EXIT_WATCHDOG, "watchdog thread: %s", strerror(err));
}

/* ------------------------------------------------------------ channel */

/* Sends a whole frame. A host that went away ends the worker. */
static void send_frame(uint32_t type, struct iovec *iov, int n)
{
    struct ci_frame_header h = {.type = type, .len = 0};
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};

    for (int i = 1; i < n; i++)
        h.len += (uint32_t)iov[i].iov_len;
    iov[0].iov_base = &h;
    iov[0].iov_len = sizeof(h);
    while (msg.msg_iovlen > 0) {
        ssize_t w = sendmsg(CI_FD_CHANNEL, &msg, MSG_NOSIGNAL);

        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EPIPE || errno == ECONNRESET)
                _exit(CI_EXIT_HOST_GONE);
            ci_fatal(CI_EXIT_PROTOCOL, "send: %s", strerror(errno));
        }
        ci_iov_advance(&msg.msg_iov, &msg.msg_iovlen, (size_t)w);
    }
}

/* Reads exactly @len bytes. Returns 0 on EOF before the first byte (when
 * @eof_ok); EOF anywhere else or an error is a protocol failure. */
static int read_exact(void *buf, size_t len, int eof_ok)
{
    size_t got = 0;

    while (got < len) {
        ssize_t r = read(CI_FD_CHANNEL, (char *)buf + got, len - got);

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            ci_fatal(CI_EXIT_PROTOCOL, "read: %s", strerror(errno));
        if (r == 0) {
            if (got == 0 && eof_ok)
                return 0;
            ci_fatal(CI_EXIT_PROTOCOL, "the channel closed inside a frame");
        }
        got += (size_t)r;
    }
    return 1;
}

void ci_send_ready(uint32_t layers, int listener)
{
    uint32_t payload[3] = {CI_PROTO_VERSION, layers,
                           listener >= 0 ? (uint32_t)listener : CI_READY_NO_LISTENER};
    struct iovec iov[2] = {{0}, {payload, sizeof(payload)}};

    send_frame(CI_FRAME_READY, iov, 2);
}

/* One field of a RESULT: its u32 tag and length, then its bytes. */
struct field {
    uint32_t head[2];
    uint32_t num;
};

static int add_u32(struct iovec *iov, struct field *f, uint32_t tag,
                   uint32_t v)
{
    f->head[0] = tag;
    f->head[1] = sizeof(f->num);
    f->num = v;
    iov[0] = (struct iovec){f->head, sizeof(f->head)};
    iov[1] = (struct iovec){&f->num, sizeof(f->num)};
    return 2;
}

static int add_text(struct iovec *iov, struct field *f, uint32_t tag,
                    const struct ci_text *t)
{
    if (!t->data)
        return 0;
    f->head[0] = tag;
    f->head[1] = (uint32_t)t->len;
    iov[0] = (struct iovec){f->head, sizeof(f->head)};
    iov[1] = (struct iovec){(void *)t->data, t->len};
    return 2;
}

static void send_result(const struct ci_cell *c, uint32_t count)
{
    struct field f[14];
    struct iovec iov[1 + 2 * 14];
    int n = 1;

    n += add_u32(iov + n, &f[6], CI_FIELD_COUNT, count);
    n += add_u32(iov + n, &f[0], CI_FIELD_OUTCOME, c->outcome);
    n += add_u32(iov + n, &f[1], CI_FIELD_FLAGS, c->flags);
    n += add_text(iov + n, &f[2], CI_FIELD_VALUE, &c->value);
    n += add_text(iov + n, &f[3], CI_FIELD_ENAME, &c->ename);
    n += add_text(iov + n, &f[4], CI_FIELD_EVALUE, &c->evalue);
    n += add_text(iov + n, &f[5], CI_FIELD_TRACEBACK, &c->traceback);
    n += add_text(iov + n, &f[9], CI_FIELD_TRACEBACK_FULL, &c->traceback_full);
    /* Optional: a plain cell's RESULT has none of them. */
    n += add_text(iov + n, &f[7], CI_FIELD_OUTPUTS, &c->outputs);
    if (c->omitted)
        n += add_u32(iov + n, &f[8], CI_FIELD_OMITTED, c->omitted);
    n += add_text(iov + n, &f[10], CI_FIELD_REFUSALS, &c->refusals);
    /* A snapshot's only. */
    n += add_text(iov + n, &f[11], CI_FIELD_STATE, &c->state);
    n += add_text(iov + n, &f[12], CI_FIELD_PACKAGES, &c->packages);
    n += add_text(iov + n, &f[13], CI_FIELD_LEFT_OUT, &c->left_out);
    send_frame(CI_FRAME_RESULT, iov, n);
}

/* Reads and drops the next @len bytes of a frame. */
static void skip(size_t len)
{
    char sink[4096];

    while (len > 0) {
        size_t n = len < sizeof(sink) ? len : sizeof(sink);

        read_exact(sink, n, 0);
        len -= n;
    }
}

/* The cell's source did not fit in memory: skip it and say so. */
static void refuse_cell(size_t len, uint32_t count)
{
    static const char ename[] = "MemoryError";
    static const char evalue[] = "no memory to receive the cell";
    struct ci_cell c = {
        .outcome = CI_OUTCOME_MEMORY,
        .ename = {ename, sizeof(ename) - 1},
        .evalue = {evalue, sizeof(evalue) - 1},
    };

    skip(len);
    send_result(&c, count);
}

/* ------------------------------------------------- input(), host calls */

static uint32_t run_flags; /* the running cell's RUN flags; 0 between cells */
static unsigned owed;      /* replies still to come to requests given up on */
static uint32_t call_result_limit; /* the FUNCTIONS frame's */
static uint32_t fetch_response_limit; /* the NETWORK frame's; 0: none came */

pthread_mutex_t ci_channel_lock = PTHREAD_MUTEX_INITIALIZER;
static int calls_open; /* under ci_channel_lock: a cell runs */

int ci_input_allowed(void)
{
    return (run_flags & CI_RUN_FLAG_INPUT) && syscall(SYS_gettid) == getpid();
}

int ci_calls_open(void)
{
    return calls_open;
}

/* Opens or closes the cell's calls; closing waits for the call in
 * progress, whose reply must be read before the next frame. */
static void set_calls_open(int open)
{
    pthread_mutex_lock(&ci_channel_lock);
    calls_open = open;
    pthread_mutex_unlock(&ci_channel_lock);
}

void ci_calls_close(void)
{
    set_calls_open(0);
}

/* The largest reply of @type (INPUT_REPLY, CALL_REPLY, FETCH_REPLY,
 * INSTALL_REPLY) after its u32 status. */
static uint64_t reply_max(uint32_t type)
{
    uint64_t call = CI_CALL_ENAME_MAX + CI_CALL_MESSAGE_MAX + sizeof(uint32_t);
    uint64_t fetch = 2 * sizeof(uint32_t) + CI_FETCH_HEAD_MAX + (uint64_t)fetch_response_limit;

    if (call < call_result_limit)
        call = call_result_limit;
    if (type == CI_FRAME_INPUT_REPLY)
        return CI_INPUT_REPLY_MAX;
    if (type == CI_FRAME_CALL_REPLY)
        return call;
    if (type == CI_FRAME_INSTALL_REPLY)
        return CI_INSTALL_REPLY_MAX;
    return fetch > CI_CALL_MESSAGE_MAX ? fetch : CI_CALL_MESSAGE_MAX;
}

/* 1 if @type is a reply (to a request given up on, for one owed). */
static int is_reply(uint32_t type)
{
    return type == CI_FRAME_INPUT_REPLY || type == CI_FRAME_CALL_REPLY ||
           type == CI_FRAME_INSTALL_REPLY || (type == CI_FRAME_FETCH_REPLY && fetch_response_limit > 0);
}

/* A reply's header is well formed (the host's: a mismatch is a bug). */
static void check_reply(const struct ci_frame_header *h, uint32_t type)
{
    if ((type ? h->type != type : !is_reply(h->type)) ||
        h->len < sizeof(uint32_t) || h->len - sizeof(uint32_t) > reply_max(h->type))
        ci_fatal(CI_EXIT_PROTOCOL, "bad frame (type %" PRIu32 ", length %" PRIu32
                 ") instead of a reply", h->type, h->len);
}

/* One request at a time (proto.h): first the replies owed are dropped. 0,
 * or -1 as @wait returned. */
static int pay_owed(int (*wait)(void))
{
    struct ci_frame_header h;

    for (; owed > 0; owed--) {
        if (wait() < 0)
            return -1;
        read_exact(&h, sizeof(h), 0);
        check_reply(&h, 0);
        skip(h.len);
    }
    return 0;
}

/* Sends the request of @iov (@n entries, the first for the header), waits
 * for its reply of @type and reads its header and status. 0, or -1 as
 * @wait returned (the reply is owed). */
static int ask_host(uint32_t type, uint32_t reply_type, struct iovec *iov, int n,
                    int (*wait)(void), uint32_t *status, size_t *reply_len)
{
    struct ci_frame_header h;

    if (pay_owed(wait) < 0)
        return -1;
    send_frame(type, iov, n);
    if (wait() < 0) {
        owed++;
        return -1;
    }
    read_exact(&h, sizeof(h), 0);
    check_reply(&h, reply_type);
    read_exact(status, sizeof(*status), 0);
    *reply_len = h.len - sizeof(*status);
    return 0;
}

int ci_call_ask(const char *name, size_t name_len, const char *json, size_t len,
                int (*wait)(void), uint32_t *status, size_t *reply_len)
{
    uint32_t nl = (uint32_t)name_len;
    struct iovec iov[4] = {{0}, {&nl, sizeof(nl)}, {(void *)name, name_len}, {(void *)json, len}};

    if (ask_host(CI_FRAME_CALL, CI_FRAME_CALL_REPLY, iov, 4, wait, status, reply_len) < 0)
        return -1;
    if (*status > CI_CALL_STOPPED || (*status == CI_CALL_STOPPED && *reply_len > 0) ||
        (*status == CI_CALL_RAISED && *reply_len < sizeof(uint32_t)))
        ci_fatal(CI_EXIT_PROTOCOL, "bad call reply (status %" PRIu32 ")", *status);
    return 0;
}

int ci_fetch_ask(const void *request, size_t len, int (*wait)(void), uint32_t *status,
                 size_t *reply_len)
{
    struct iovec iov[2] = {{0}, {(void *)request, len}};

    if (ask_host(CI_FRAME_FETCH, CI_FRAME_FETCH_REPLY, iov, 2, wait, status, reply_len) < 0)
        return -1;
    if (*status > CI_FETCH_TIMED_OUT || (*status == CI_FETCH_STOPPED && *reply_len > 0) ||
        (*status == CI_FETCH_DONE && *reply_len < 2 * sizeof(uint32_t)))
        ci_fatal(CI_EXIT_PROTOCOL, "bad HTTP reply (status %" PRIu32 ")", *status);
    return 0;
}

int ci_install_ask(uint32_t op, const char *arg, size_t len, int (*wait)(void), uint32_t *status,
                   size_t *reply_len)
{
    struct iovec iov[3] = {{0}, {&op, sizeof(op)}, {(void *)arg, len}};

    if (ask_host(CI_FRAME_INSTALL, CI_FRAME_INSTALL_REPLY, iov, 3, wait, status, reply_len) < 0)
        return -1;
    if (*status > CI_INSTALL_STOPPED || (*status == CI_INSTALL_STOPPED && *reply_len > 0))
        ci_fatal(CI_EXIT_PROTOCOL, "bad install reply (status %" PRIu32 ")", *status);
    return 0;
}

int ci_input_ask(uint32_t flags, const char *prompt, size_t len, int (*wait)(void),
                 uint32_t *status, size_t *reply_len)
{
    struct iovec iov[3] = {{0}, {&flags, sizeof(flags)}, {(void *)prompt, len}};

    if (ask_host(CI_FRAME_INPUT_REQUEST, CI_FRAME_INPUT_REPLY, iov, 3, wait, status,
                 reply_len) < 0)
        return -1;
    if (*status > CI_INPUT_STOPPED || (*status != CI_INPUT_ANSWERED && *reply_len > 0))
        ci_fatal(CI_EXIT_PROTOCOL, "bad input reply (status %" PRIu32 ")", *status);
    return 0;
}

void ci_input_read(char *buf, size_t len)
{
    if (buf)
        read_exact(buf, len, 0);
    else
        skip(len);
}

/*
 * Between cells. A host that sends its next cell as soon as it has a
 * result (a loop of small cells, a benchmark) would otherwise wait each
 * time for this process to be woken, which on a virtual machine's other
 * CPU costs about as long again as the cell. So, while the cells have
 * been coming back to back (the last one within AWAIT_QUICK_US of its
 * result), the worker polls its channel for up to AWAIT_SPIN_US before
 * it blocks; when they stop coming that fast, it stops polling, so an
 * idle session costs at most one such spin.
 */
#define AWAIT_SPIN_US 100
#define AWAIT_QUICK_US 1000

static int64_t now_us(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Returns once a frame's first byte is there, or the channel closed. */
static void await_next_cell(void)
{
    static int64_t last_wait_us = 0;
    int64_t start = now_us(), end = start + AWAIT_SPIN_US;
    struct pollfd p = {.fd = CI_FD_CHANNEL, .events = POLLIN};
    char byte;

    if (last_wait_us < AWAIT_QUICK_US) {
        do {
            if (recv(CI_FD_CHANNEL, &byte, 1, MSG_PEEK | MSG_DONTWAIT) != -1 || errno != EAGAIN) {
                last_wait_us = now_us() - start;
                return;
            }
            /* The host may be waiting for this CPU. */
            sched_yield();
        } while (now_us() < end);
    }
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        ;
    last_wait_us = now_us() - start;
}

/*
 * A FUNCTIONS frame of @len bytes (proto.h): its functions become the
 * cell's builtins. The host's, so a malformed one is a bug that ends the
 * worker.
 */
static void define_functions(size_t len)
{
    uint32_t head[3]; /* count, argument limit, result limit */
    struct ci_function_def *defs;
    char *p, *end;

    if (len < sizeof(head) || !(p = malloc(len)))
        ci_fatal(CI_EXIT_PROTOCOL, "a FUNCTIONS frame of %zu bytes", len);
    read_exact(p, len, 0);
    memcpy(head, p, sizeof(head));
    if (head[0] == 0 || head[0] > CI_FUNCTIONS_MAX || head[1] < CI_CALL_LIMIT_MIN ||
        head[1] > CI_CALL_LIMIT_MAX || head[2] < CI_CALL_LIMIT_MIN ||
        head[2] > CI_CALL_LIMIT_MAX || !(defs = calloc(head[0], sizeof(*defs))))
        ci_fatal(CI_EXIT_PROTOCOL, "a malformed FUNCTIONS frame");
    end = p + len;
    p += sizeof(head);
    for (uint32_t i = 0; i < head[0]; i++) {
        uint32_t nd[2];

        if ((size_t)(end - p) < sizeof(nd))
            ci_fatal(CI_EXIT_PROTOCOL, "a FUNCTIONS frame cut short");
        memcpy(nd, p, sizeof(nd));
        p += sizeof(nd);
        if (nd[0] == 0 || nd[0] > CI_FUNCTION_NAME_MAX || nd[1] > CI_FUNCTION_DOC_MAX ||
            (size_t)(end - p) < (size_t)nd[0] + nd[1])
            ci_fatal(CI_EXIT_PROTOCOL, "a FUNCTIONS frame cut short");
        defs[i] = (struct ci_function_def){p, nd[0], p + nd[0], nd[1]};
        p += nd[0] + nd[1];
    }
    if (p != end)
        ci_fatal(CI_EXIT_PROTOCOL, "a FUNCTIONS frame with bytes left over");
    call_result_limit = head[2];
    ci_interp_define(defs, head[0], head[1], head[2]);
    free(defs);
    free(end - len);
}

/*
 * A NETWORK frame of @len bytes (proto.h): the cell's HTTP clients then
 * send their requests to the host. The host's, so a malformed one is a
 * bug that ends the worker.
 */
static void enable_network(size_t len)
{
    uint32_t limits[2]; /* request body, response body */

    if (len != sizeof(limits))
        ci_fatal(CI_EXIT_PROTOCOL, "a NETWORK frame of %zu bytes", len);
    read_exact(limits, sizeof(limits), 0);
    if (limits[0] == 0 || limits[0] > CI_URL_LIMIT_MAX || limits[1] == 0 ||
        limits[1] > CI_URL_LIMIT_MAX)
        ci_fatal(CI_EXIT_PROTOCOL, "a malformed NETWORK frame");
    fetch_response_limit = limits[1];
    ci_interp_enable_network(limits[0], limits[1]);
}

/*
 * A CPU_BUDGET frame of @len bytes (proto.h), to a checkpoint that took
 * over: RLIMIT_CPU lowered to what the session has left. The host's, so a
 * malformed one, or one that would raise the limit, ends the worker.
 */
static void set_cpu_budget(size_t len)
{
    uint64_t seconds;
    struct rlimit rl;

    if (len != sizeof seconds)
        ci_fatal(CI_EXIT_PROTOCOL, "a CPU_BUDGET frame of %zu bytes", len);
    read_exact(&seconds, sizeof seconds, 0);
    if (getrlimit(RLIMIT_CPU, &rl) != 0 || seconds == 0 || seconds > (uint64_t)rl.rlim_max)
        ci_fatal(CI_EXIT_PROTOCOL, "a CPU_BUDGET of %" PRIu64 " s", seconds);
    rl.rlim_cur = rl.rlim_max = (rlim_t)seconds;
    if (setrlimit(RLIMIT_CPU, &rl) != 0)
        ci_fatal(CI_EXIT_RLIMIT, "setrlimit(RLIMIT_CPU): %s", strerror(errno));
}

/* 1 if a RUN's @head (count, flags) and @len bytes after it are what
 * proto.h allows: a cell (with a checkpoint only under a reaper), a
 * snapshot or a restore. */
static int run_valid(const uint32_t head[2], size_t len, int rollback)
{
    uint32_t kind = head[1] & (CI_RUN_FLAG_SNAPSHOT | CI_RUN_FLAG_RESTORE);

    if (head[1] & ~(CI_RUN_FLAG_INPUT | CI_RUN_FLAG_SNAPSHOT | CI_RUN_FLAG_RESTORE |
                    CI_RUN_FLAG_CHECKPOINT))
        return 0;
    if ((head[1] & CI_RUN_FLAG_CHECKPOINT) && (!rollback || kind != 0))
        return 0;
    if (kind == 0)
        return len <= CI_MAX_CODE_BYTES;
    if (!(head[0] & CI_RUN_COUNT_INTERNAL) || (head[1] & CI_RUN_FLAG_INPUT))
        return 0;
    if (kind == CI_RUN_FLAG_SNAPSHOT)
        return len == 0;
    return kind == CI_RUN_FLAG_RESTORE &&
           len <= (size_t)4 + CI_PACKAGES_MAX + CI_STATE_MAX;
}

/* A frame of one u32, @count: CHECKPOINTED or ROLLED_BACK. */
static void send_count(uint32_t type, uint32_t count)
{
    struct iovec iov[2] = {{0}, {&count, sizeof count}};

    send_frame(type, iov, 2);
}

/* Before a cell whose RUN asks for a checkpoint (checkpoint.c): 1 in the
 * checkpoint once it has taken over from a worker that died in the cell
 * of @count, with the watchdog, a thread the fork did not copy, started
 * again, and the host told; 0 in the worker, the host told whether there
 * is one. */
static int checkpoint(uint32_t count)
{
    switch (ci_checkpoint_make()) {
    case 1:
        start_watchdog();
        send_count(CI_FRAME_ROLLED_BACK, count);
        return 1;
    case 0:
        send_count(CI_FRAME_CHECKPOINTED, count);
        return 0;
    default:
        return 0; /* none: the host stops approving at the RESULT */
    }
}

/* Reads RUN frames and answers each with one RESULT, until EOF; drops
 * the replies owed to requests a cell gave up on. A FUNCTIONS frame
 * may come once, before the first RUN. The seccomp @listener (or -1) is
 * closed once the first frame is in: by then the host holds its copy. */
static _Noreturn void serve(const struct ci_limits *limits, int rollback, int listener)
{
    int ran = 0, defined = 0, networked = 0, took_over = 0;

    for (;;) {
        struct ci_frame_header h;
        uint32_t head[2]; /* execution count, flags */
        struct ci_cell cell;
        char *src;
        size_t len;

        await_next_cell();
        if (!read_exact(&h, sizeof(h), 1))
            _exit(CI_EXIT_HOST_GONE);
        if (listener >= 0) {
            close(listener);
            listener = -1;
        }
        if (is_reply(h.type) && owed > 0) {
            check_reply(&h, 0);
            skip(h.len);
            owed--;
            continue;
        }
        if (h.type == CI_FRAME_FUNCTIONS && !ran && !defined) {
            define_functions(h.len);
            defined = 1;
            continue;
        }
        if (h.type == CI_FRAME_CPU_BUDGET && rollback && took_over) {
            set_cpu_budget(h.len);
            took_over = 0;
            continue;
        }
        if (h.type == CI_FRAME_NETWORK && !ran && !networked) {
            enable_network(h.len);
            networked = 1;
            continue;
        }
        if (h.type != CI_FRAME_RUN || h.len < sizeof(head))
            ci_fatal(CI_EXIT_PROTOCOL, "bad frame (type %" PRIu32
                     ", length %" PRIu32 ")", h.type, h.len);
        /* Every reply owed came before this RUN; one a cell's thread
         * read off the channel never will. */
        owed = 0;
        read_exact(head, sizeof(head), 0);
        len = h.len - sizeof(head);
        if (!run_valid(head, len, rollback))
            ci_fatal(CI_EXIT_PROTOCOL, "a RUN with flags %#" PRIx32 " of %zu bytes", head[1],
                     len);
        src = malloc(len + 1);
        if (!src) {
            refuse_cell(len, head[0]);
            continue;
        }
        read_exact(src, len, 0);
        took_over = 0;
        if ((head[1] & CI_RUN_FLAG_CHECKPOINT) && checkpoint(head[0])) {
            /* The worker died in this cell; its state before it is ours. */
            free(src);
            took_over = 1;
            continue;
        }
        run_flags = head[1];
        ran = 1;
        /* A snapshot's or restore's pickles may not reach the host. */
        set_calls_open(!(head[1] & (CI_RUN_FLAG_SNAPSHOT | CI_RUN_FLAG_RESTORE)));
        ci_interp_run(head[0], head[1], src, len, limits, &cell); /* closes the calls */
        run_flags = 0;
        free(src);
        ci_checkpoint_drop(); /* the cell is over: no rollback from here */
        send_result(&cell, head[0]);
        ci_interp_cell_done(&cell);
        ci_checkpoint_reap();
    }
}

int main(int argc, char **argv)
{
    struct args a;
    sigset_t sigint;
    uint32_t layers = 0;
    char *session_dir = NULL;
    int listener;

    parse_args(argc, argv, &a);
    wipe_args(argc, argv, &a);
    /* Before check_descriptors() closes it. */
    if (a.manifest)
        ci_manifest_read(CI_FD_POLICY);
    check_descriptors();
    if (a.zygote) {
        struct ci_spawn_request req;

        layers = ci_zygote_serve(a.parent, a.limits.preload, &req, &session_dir);
        /* A child: its descriptors are in place, its interpreter warm. */
        limits_from_request(&a, &req);
        a.rollback = (req.flags & CI_SPAWN_FLAG_ROLLBACK) != 0;
        /* As ci_leave_root() says it for a worker started by exec. */
        if (chdir(session_dir) != 0 || chdir("workspace") != 0) {
            char ws[CI_SPAWN_DIR_MAX + sizeof "/workspace"];
            int err = errno;

            snprintf(ws, sizeof ws, "%s/workspace", session_dir);
            ci_fatal_unreachable(ws, err);
        }
    }
    layers = ci_lockdown_start(a.parent, layers, a.zygote, &a.limits);
    /* Single-threaded, as the fork needs: pid 1 stays as the reaper. */
    if (a.rollback)
        a.rollback = ci_reaper_start();
    /* In the new root, as CPython will read them; a zygote's child
     * inherits its zygote's check. */
    if (!a.zygote)
        ci_manifest_check_files();

    /* Threads started while importing inherit a blocked SIGINT, so the
     * host's interrupt can only land on the main thread. */
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    set_sigmask(SIG_BLOCK, &sigint, NULL);
    start_watchdog();

    if (a.zygote)
        ci_interp_configure(&a.limits, session_dir);
    else
        ci_interp_start(&a.limits);
    ci_init_signals(); /* pid 1 of a PID namespace only */
    set_sigmask(SIG_UNBLOCK, &sigint, NULL);

    layers = ci_lockdown(a.parent, layers, &a.limits, a.rollback, &listener);
    ci_send_ready(layers, listener);
    serve(&a.limits, a.rollback, listener);
}
