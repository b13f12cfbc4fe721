/*
 * One run: send the cell, wait with a deadline while reading its output,
 * interrupt at the timeout, kill after the grace period, collect.
 *
 * ci_run returns within timeout + grace (+ at most 50 ms to see a killed
 * worker go; a slower one is reaped in the background) whatever the worker
 * does: every wait below is bounded by the run's hard deadline, output is
 * drained in bounded steps, and the worker's frames are read incrementally
 * and capped, so a hostile worker can neither stall nor flood the host.
 * Only the host's own callbacks, on_input while the cell waits for its
 * input() and a host function while the cell waits for its call, can hold
 * a run longer; neither is called once the cell is being stopped.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit.h"
#include "changes.h"
#include "channel.h"
#include "clock.h"
#include "config.h"
#include "cpu.h"
#include "errors.h"
#include "fd.h"
#include "fetch.h"
#include "files.h"
#include "functions.h"
#include "output.h"
#include "proto.h"
#include "result.h"
#include "rollback.h"
#include "run.h"
#include "session.h"
#include "usage.h"
#include "wheel.h"

/* Why the run sent SIGINT, if it did. */
enum interrupt { NOT_INTERRUPTED, BY_TIMEOUT, BY_REQUEST };

struct run {
    ci_session *s;
    ci_result *r;
    struct ci_drain drain;
    struct ci_reader rd;
    unsigned long timeout_ms;
    int64_t deadline;  /* the timeout: interrupt */
    int64_t hard;      /* interrupt + grace: kill */
    enum interrupt interrupted;
    int seq;           /* the session's run number (ci_session.run_seq) */
    int64_t reap_by;   /* if set, kill a dying worker then, not at hard */
    char violation[CI_VIOLATION_NAME_MAX + 1]; /* a VIOLATION frame's name */
    unsigned requests;    /* HTTP requests this run asked for */
    ci_input_fn on_input; /* NULL: the RUN says the host answers no input() */
    void *payload;
    int workspace;        /* an O_PATH descriptor of it for the run, or -1 */
    uint32_t flags;       /* the RUN's CI_RUN_FLAG_* */
    int rollback_ok;      /* 1: a death the host decides may roll back to the checkpoint */
};

static int set_text(char **slot, const char *text)
{
    free(*slot);
    *slot = ci_strdup(text);
    return *slot ? 0 : -1;
}

/* How long a rollback may take once the worker is dead: its exit, the
 * checkpoint's wake-up and word. Milliseconds in practice. */
#define ROLLBACK_MS 1000

/* Clears what a killed worker's result cannot keep, and says @name and
 * @value as its error. */
static void set_killed(ci_result *r, const char *name, const char *value)
{
    r->status = CI_STATUS_KILLED;
    free(r->value);
    r->value = NULL;
    free(r->traceback);
    r->traceback = NULL;
    free(r->traceback_full);
    r->traceback_full = NULL;
    /* Outputs of a result that failed to decode are not to be trusted. */
    ci_result_drop_outputs(r);
    if (set_text(&r->error_name, name) < 0 || set_text(&r->error_value, value) < 0) {
        /* Out of memory: the status alone still tells the truth. */
    }
}

static void end_task(struct run *run, const char *name, const char *why, int ended, int st,
                     unsigned long long cpu_us, int rolled);

/* The worker is gone or must go: kill it if needed, reap it, and say why
 * in the result. The session is dead until restarted, unless it rolls
 * back (roll_back). */
static void end_killed(struct run *run, const char *name, const char *why)
{
    ci_session *s = run->s;
    const char *end_name;
    char end[256], value[512];

    if (why && run->rollback_ok) {
        end_task(run, name ? name : "WorkerDied", why, 0, 0, 0, 0);
        return;
    }
    if (why) /* we decided: it dies now, before a flood can delay us */
        kill(s->worker.pid, SIGKILL);
    ci_drain_pipes(&run->drain); /* what it wrote before it went */
    if (ci_worker_reap(&s->worker, run->reap_by ? run->reap_by : run->hard, &end_name, end,
                       sizeof end) &&
        !why)
        why = "the worker closed its protocol channel but did not exit; it was killed";
    if (why)
        snprintf(value, sizeof value, "%s", why);
    else if (run->violation[0] && strcmp(end_name, "SandboxViolation") == 0)
        snprintf(value, sizeof value,
                 "the cell made a forbidden system call (%s); the worker was killed",
                 run->violation);
    else
        snprintf(value, sizeof value, "%s", end);
    set_killed(run->r, name ? name : end_name, value);
    /* What ci_session_errmsg() says afterwards; the next run gets CI_EDEAD. */
    ci_err_set(&s->err, CI_EDEAD, "cell %d killed its worker: %s: %s", run->r->execution_count,
               run->r->error_name ? run->r->error_name : "", value);
}

/*
 * The worker of a session with rollback is dead, or must die (@why, the
 * host's reason, named @name): its checkpoint takes its place if this
 * cell made one (rollback.c), and the result says the session was rolled
 * back; else the session ends. @ended: the reaper's ENDED came (with
 * wait status @st after @cpu_us of CPU time); @rolled: the checkpoint's
 * ROLLED_BACK came. A worker the CPU limit ended is never rolled back:
 * the limit is the session's, over its whole life.
 */
static void end_task(struct run *run, const char *name, const char *why, int ended, int st,
                     unsigned long long cpu_us, int rolled)
{
    struct ci_worker *w = &run->s->worker;
    int took = w->checkpoint &&
               ci_rollback_take_over(w, &run->rd, (uint32_t)run->r->execution_count, &ended, &st,
                                     &cpu_us, rolled, ci_now_ms() + ROLLBACK_MS) == 0;
    char value[512], rolled_back[640];

    if (why) {
        snprintf(value, sizeof value, "%s", why);
    } else if (!ended) {
        name = "WorkerDied";
        snprintf(value, sizeof value, "the worker died");
    } else {
        ci_worker_describe_end(w, st, cpu_us, &name, value, sizeof value);
        if (run->violation[0] && strcmp(name, "SandboxViolation") == 0)
            snprintf(value, sizeof value,
                     "the cell made a forbidden system call (%s); the worker was killed",
                     run->violation);
    }
    if (took && !(ended && !why && ci_worker_cpu_limited(w, st, cpu_us)) &&
        ci_rollback_keep_cpu_budget(w, cpu_us, ci_now_ms() + ROLLBACK_MS) == 0) {
        ci_drain_pipes(&run->drain); /* what it wrote before it went */
        snprintf(rolled_back, sizeof rolled_back,
                 "%s; the session was rolled back to its state before the cell", value);
        set_killed(run->r, name, rolled_back);
        run->r->rolled_back = 1;
        /* What ci_session_errmsg() says, as of any cell that killed its
         * worker; the next run works. */
        ci_err_set(&run->s->err, CI_EDEAD, "cell %d killed its worker: %s: %s",
                   run->r->execution_count, name, rolled_back);
        return;
    }
    run->rollback_ok = 0;
    end_killed(run, name, value); /* the reaper too, and all under it */
}

/* Turns a decoded RESULT into the result's status. */
static void classify(struct run *run, uint32_t outcome)
{
    ci_result *r = run->r;
    char msg[128];

    switch (outcome) {
    case CI_OUTCOME_OK:
        r->status = CI_STATUS_OK;
        break;
    case CI_OUTCOME_MEMORY:
        r->status = CI_STATUS_MEMORY;
        break;
    case CI_OUTCOME_INTERRUPT:
    case CI_OUTCOME_ERROR:
    default:
        r->status = CI_STATUS_ERROR;
        break;
    }
    /* An interrupt we sent is a timeout, or the caller's interrupt,
     * whatever the cell made of it; a KeyboardInterrupt the cell raised
     * itself stays an error. */
    if (run->interrupted != NOT_INTERRUPTED) {
        free(r->value);
        r->value = NULL;
    }
    if (run->interrupted == BY_TIMEOUT) {
        r->status = CI_STATUS_TIMEOUT;
        snprintf(msg, sizeof msg, "the cell ran past the %lu ms timeout and was interrupted",
                 run->timeout_ms);
        set_text(&r->error_name, "TimeoutError");
        set_text(&r->error_value, msg);
    } else if (run->interrupted == BY_REQUEST) {
        /* As Jupyter reports it; the cell may have caught the first
         * KeyboardInterrupt and ended otherwise, but it was stopped. */
        r->status = CI_STATUS_INTERRUPTED;
        if (outcome != CI_OUTCOME_INTERRUPT) {
            set_text(&r->error_name, "KeyboardInterrupt");
            set_text(&r->error_value, "the cell was interrupted");
        }
    }
}

/* A VIOLATION frame: u32 syscall number, then its name. 0 if it is well
 * formed (the name is kept for when the worker dies), else -1 with @why. */
static int on_violation(struct run *run, const char **why)
{
    if (run->violation[0]) {
        *why = "a second violation report";
        return -1;
    }
    if (ci_violation_parse(run->rd.payload, run->rd.len, run->violation, why) < 0)
        return -1;
    ci_audit_violation(run->s, run->violation);
    return 0;
}

/* To the main thread, where Python raises KeyboardInterrupt: a thread the
 * cell started may not block SIGINT, and a signal it took would not wake
 * the main thread's sleep. Queued with the cell's number, so the worker
 * can tell it from a late one for the cell before (proto.h). The grace
 * period starts now. */
static void interrupt(struct run *run, enum interrupt why)
{
    struct ci_worker *w = &run->s->worker;
    siginfo_t info;

    memset(&info, 0, sizeof info);
    info.si_signo = SIGINT;
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_uid = getuid();
    info.si_value.sival_int = run->r->execution_count;
    syscall(SYS_rt_tgsigqueueinfo, ci_worker_task(w), ci_worker_task(w), SIGINT, &info);
    run->interrupted = why;
    run->hard = ci_now_ms() + (int64_t)run->s->cfg.grace_ms;
}

/* Empties the wake-up eventfd, then says whether ci_session_interrupt()
 * asked to stop this run's cell. */
static int interrupt_requested(struct run *run)
{
    int fd = atomic_load(&run->s->wake_fd);
    uint64_t n;

    while (fd >= 0 && read(fd, &n, sizeof n) > 0)
        ;
    return atomic_load(&run->s->interrupt_for) == run->seq;
}

/*
 * The eventfd ci_session_interrupt() wakes this run with, made for the
 * run alone so that an idle session holds none. Without one (the host is
 * out of descriptors) the request is still seen, at the latest when the
 * run's poll next times out (a second).
 *
 * ci_session_interrupt() may run in a signal handler, on this thread
 * too, so it takes no lock: it counts itself in s->wake_users while it
 * uses the descriptor, and the run closes it only once the descriptor
 * is out of reach and no call still uses it. A handler on this thread
 * has returned before the wait begins; another thread's call is a
 * write(2) away from done.
 */
static void wake_open(ci_session *s)
{
    atomic_store(&s->wake_fd, eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
}

static void wake_close(ci_session *s)
{
    int fd = atomic_exchange(&s->wake_fd, -1);

    while (atomic_load(&s->wake_users) != 0)
        sched_yield();
    if (fd >= 0)
        close(fd);
}

/* The type of the frame whose header waits on @channel, or 0 if no whole
 * header does. */
static uint32_t waiting_frame(int channel)
{
    struct ci_frame_header h;
    ssize_t n;
    do
        n = recv(channel, &h, sizeof h, MSG_PEEK | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof h ? h.type : 0;
}

/* Interrupts the cell if its timeout has passed or ci_session_interrupt()
 * asked, unless it is interrupted already. */
static void stop_if_due(struct run *run)
{
    if (run->interrupted != NOT_INTERRUPTED)
        return;
    if (ci_now_ms() >= run->deadline)
        interrupt(run, BY_TIMEOUT);
    else if (interrupt_requested(run))
        interrupt(run, BY_REQUEST);
}

/* 1 if a request (CALL, FETCH or INPUT_REQUEST) waits on @channel: a
 * worker makes one at a time, and waits for its reply (proto.h). */
static int request_waiting(int channel)
{
    uint32_t type = waiting_frame(channel);
    return type == CI_FRAME_CALL || type == CI_FRAME_FETCH || type == CI_FRAME_INSTALL ||
           type == CI_FRAME_INPUT_REQUEST;
}

/* Sends a reply frame of @type: its u32 status, then @len bytes of @data.
 * 0, or 1 when it could not be sent (the worker is killed: the run is
 * over); @what names the reply in the result. */
static int send_reply(struct run *run, uint32_t type, uint32_t status, const void *data,
                      size_t len, const char *what)
{
    char msg[200];

    if (ci_send_frame(run->s->worker.channel, type, &status, sizeof status, data, len,
                      run->hard, &run->drain) == 0)
        return 0;
    snprintf(msg, sizeof msg, "the answer to %s could not be sent to the worker (%s); it "
             "was killed", what, strerror(errno));
    end_killed(run, errno == ETIMEDOUT ? "TimeoutError" : NULL, errno == ETIMEDOUT ? msg : NULL);
    return 1;
}

/* The host's answer to the prompt: its status, and for CI_INPUT_ANSWERED
 * the answer in *@reply (malloc'ed) of *@len bytes. */
static uint32_t ask_host(struct run *run, uint32_t flags, const char *prompt, char **reply,
                         size_t *len)
{
    char *answer = NULL;
    int rc = run->on_input(prompt, (flags & CI_INPUT_FLAG_PASSWORD) != 0, &answer, run->payload);

    if (rc != 0 || !answer) {
        free(answer);
        return CI_INPUT_REFUSED;
    }
    *len = strnlen(answer, CI_INPUT_REPLY_MAX + 1);
    if (*len > CI_INPUT_REPLY_MAX || !ci_utf8_valid((const unsigned char *)answer, *len)) {
        free(answer);
        *len = 0;
        return CI_INPUT_INVALID;
    }
    *reply = answer;
    return CI_INPUT_ANSWERED;
}

/*
 * An INPUT_REQUEST, checked: asks the host's on_input (unless the cell is
 * being stopped) and sends its INPUT_REPLY. The timeout runs on meanwhile;
 * once it has passed, or an interrupt was asked for, the answer is dropped
 * and the cell interrupted. 0: wait on; 1: the run is over (the reply
 * could not be sent); -1 with @why: the worker broke the protocol.
 */
static int on_input_request(struct run *run, const char **why)
{
    uint32_t flags, status = CI_INPUT_STOPPED;
    char *reply = NULL;
    size_t len = 0;
    int rc;

    if (!run->on_input) {
        *why = "an input request in a run that takes no input";
        return -1;
    }
    if (ci_input_request_parse(run->rd.payload, run->rd.len, &flags, why) < 0)
        return -1;
    run->rd.payload[run->rd.len] = '\0'; /* the reader's spare byte: the prompt ends */
    stop_if_due(run);
    if (run->interrupted == NOT_INTERRUPTED) {
        /* What the cell printed before it asked, a partial line too. */
        ci_drain_pipes(&run->drain);
        ci_drain_give_partial(&run->drain, INT64_MAX);
        status = ask_host(run, flags, (const char *)run->rd.payload + sizeof flags, &reply, &len);
        stop_if_due(run);
    }
    if (run->interrupted != NOT_INTERRUPTED) {
        status = CI_INPUT_STOPPED;
        len = 0;
    }
    if (request_waiting(run->s->worker.channel)) {
        free(reply);
        *why = waiting_frame(run->s->worker.channel) == CI_FRAME_CALL
                   ? "a call before the reply to an input request"
                   : "a second input request before the reply to the first";
        return -1;
    }
    rc = send_reply(run, CI_FRAME_INPUT_REPLY, status, reply, len, "input()");
    free(reply);
    return rc;
}

/*
 * A CALL, checked: runs the host function (unless the cell is being
 * stopped) and sends its CALL_REPLY. As for input(), the timeout runs on
 * meanwhile, and an answer given after it, or after an interrupt request,
 * is dropped and the cell interrupted. 0: wait on; 1: the run is over;
 * -1 with @why: the worker broke the protocol.
 */
static int on_call(struct run *run, const char **why)
{
    const struct ci_function *fn;
    size_t at;
    ci_reply reply;
    char what[CI_FUNCTION_NAME_MAX + 8];
    int rc;

    if (ci_call_parse(run->rd.payload, run->rd.len, &run->s->cfg, &fn, &at, why) < 0)
        return -1;
    run->rd.payload[run->rd.len] = '\0'; /* the reader's spare byte: the JSON ends */
    ci_reply_init(&reply, run->s, fn->name);
    reply.status = CI_CALL_STOPPED;
    stop_if_due(run);
    if (run->interrupted == NOT_INTERRUPTED) {
        /* What the cell printed before it called, a partial line too. */
        ci_drain_pipes(&run->drain);
        ci_drain_give_partial(&run->drain, INT64_MAX);
        fn->fn(fn->payload, fn->name, (const char *)run->rd.payload + at, run->rd.len - at,
               &reply);
        ci_reply_finish(&reply);
        stop_if_due(run);
    }
    if (run->interrupted != NOT_INTERRUPTED) {
        ci_reply_clear(&reply);
        reply.status = CI_CALL_STOPPED;
    }
    if (request_waiting(run->s->worker.channel)) {
        ci_reply_clear(&reply);
        *why = "a second request before the reply to a call";
        return -1;
    }
    ci_audit_call(run->s, fn->name, run->rd.len - at, reply.status, reply.len);
    snprintf(what, sizeof what, "%s()", fn->name);
    rc = send_reply(run, CI_FRAME_CALL_REPLY, reply.status, reply.data, reply.len, what);
    ci_reply_clear(&reply);
    return rc;
}

/*
 * The end of a FETCH's or an INSTALL's handling: the answer's @status and
 * @len bytes at @data (malloc'ed, taken), sent as a reply of @type, or
 * @stopped and nothing once the cell is being stopped; @what names the
 * request in messages. 0: wait on; 1: the run is over; -1 with @why set
 * to @second (a static sentence): a second request came before this
 * reply.
 */
static int reply_and_free(struct run *run, uint32_t type, uint32_t status, uint32_t stopped,
                          void *data, size_t len, const char *what, const char *second,
                          const char **why)
{
    int rc;

    if (run->interrupted != NOT_INTERRUPTED) {
        free(data);
        data = NULL;
        status = stopped;
        len = 0;
    }
    if (request_waiting(run->s->worker.channel)) {
        free(data);
        *why = second;
        return -1;
    }
    rc = send_reply(run, type, status, data, len, what);
    free(data);
    return rc;
}

/* The audit trail's line for one request the host made or refused. */
static void audit_fetch(ci_session *s, const struct ci_fetch_request *req,
                        const struct ci_fetch_reply *reply)
{
    char *method = strndup(req->method, req->method_len), *url = strndup(req->url, req->url_len);

    /* Out of memory: the line is still written, without the names. */
    ci_audit_http(s, method ? method : "", url ? url : "", reply->http_status, reply->body_bytes,
                  reply->status != CI_FETCH_REFUSED);
    free(method);
    free(url);
}

/* ci_fetch_perform's question while a request runs: 1 once the cell is
 * being stopped (its timeout, or an interrupt asked for). */
static int fetch_stop(void *arg)
{
    struct run *run = arg;
    stop_if_due(run);
    return run->interrupted != NOT_INTERRUPTED;
}

/*
 * A FETCH, checked: the host makes the request (unless the cell is being
 * stopped) and sends its FETCH_REPLY. The request ends when the cell is
 * stopped, and its answer is then dropped. 0: wait on; 1: the run is
 * over; -1 with @why: the worker broke the protocol.
 */
static int on_fetch(struct run *run, const char **why)
{
    struct ci_fetch_request req;
    struct ci_fetch_reply reply = {CI_FETCH_STOPPED, NULL, 0, 0, 0};

    if (!run->s->worker.network_sent) {
        *why = "an HTTP request from a worker that was given no network";
        return -1;
    }
    if (ci_fetch_parse(run->rd.payload, run->rd.len, &run->s->cfg, &req, why) < 0)
        return -1;
    stop_if_due(run);
    if (run->interrupted == NOT_INTERRUPTED && ++run->requests > CI_FETCH_PER_RUN_MAX) {
        char msg[256];
        snprintf(msg, sizeof msg, "this cell has made %u HTTP requests through the host, the "
                 "most one cell may; make the rest in another cell", CI_FETCH_PER_RUN_MAX);
        reply.status = CI_FETCH_REFUSED;
        reply.data = (unsigned char *)ci_strdup(msg);
        reply.len = reply.data ? strlen(msg) : 0;
        run->r->http_over_limit++;
    } else if (run->interrupted == NOT_INTERRUPTED) {
        ci_drain_pipes(&run->drain);
        ci_drain_give_partial(&run->drain, INT64_MAX);
        ci_fetch_perform(&run->s->cfg, &req, run->deadline, fetch_stop, run, &reply);
        audit_fetch(run->s, &req, &reply);
        stop_if_due(run);
    }
    return reply_and_free(run, CI_FRAME_FETCH_REPLY, reply.status, CI_FETCH_STOPPED, reply.data,
                          reply.len, "an HTTP request",
                          "a second request before the reply to an HTTP request", why);
}

/*
 * An INSTALL, checked: the host lists the wheelhouse or installs a wheel
 * from it (unless the cell is being stopped; an install in progress stops
 * with the cell and is undone) and sends its INSTALL_REPLY. 0: wait on;
 * 1: the run is over; -1 with @why: the worker broke the protocol.
 */
static int on_install(struct run *run, const char **why)
{
    struct ci_install_reply reply = {CI_INSTALL_STOPPED, NULL, 0};
    const char *arg;
    size_t arg_len;
    uint32_t op;

    if (ci_install_parse(run->rd.payload, run->rd.len, &op, &arg, &arg_len, why) < 0)
        return -1;
    stop_if_due(run);
    if (run->interrupted == NOT_INTERRUPTED) {
        ci_drain_pipes(&run->drain);
        ci_drain_give_partial(&run->drain, INT64_MAX);
        ci_install_serve(run->s, op, arg, arg_len, fetch_stop, run, &reply);
        if (op == CI_INSTALL_WHEEL)
            ci_audit_install(run->s, arg, arg_len, reply.status, reply.data, reply.len);
        stop_if_due(run);
    }
    return reply_and_free(run, CI_FRAME_INSTALL_REPLY, reply.status, CI_INSTALL_STOPPED,
                          reply.data, reply.len, "a package install",
                          "a second request before the reply to an install request", why);
}

/* Handles one whole frame from the worker. 1: the run is over; 0: wait
 * on (a VIOLATION: the worker is about to die; an INPUT_REQUEST or a
 * CALL, once answered). */
/* A process of the worker's that is not its checkpoint, or a checkpoint
 * still alive after the cell (rollback.c): only a cell that took over the
 * worker's main thread makes one. */
static const char not_the_checkpoint[] =
    "the worker made a process of its own (a fork the host approved for the "
    "checkpoint, made by the cell); it was killed";

static int on_frame(struct run *run)
{
    struct ci_worker *w = &run->s->worker;
    uint32_t outcome = CI_OUTCOME_ERROR, count = 0;
    const char *why = "unexpected frame type";
    char msg[160], late[64];
    int rc;

    if (run->rd.type == CI_FRAME_INPUT_REQUEST || run->rd.type == CI_FRAME_CALL ||
        run->rd.type == CI_FRAME_FETCH || run->rd.type == CI_FRAME_INSTALL) {
        uint32_t type = run->rd.type;
        const char *what = type == CI_FRAME_CALL      ? "a call"
                           : type == CI_FRAME_FETCH   ? "an HTTP request"
                           : type == CI_FRAME_INSTALL ? "an install request"
                                                      : "an input request";
        if (run->violation[0] || run->s->worker.signaled) {
            snprintf(late, sizeof late, "%s after a %s report", what,
                     run->violation[0] ? "violation" : "signal");
            why = late;
        } else if (run->flags & (CI_RUN_FLAG_SNAPSHOT | CI_RUN_FLAG_RESTORE)) {
            /* Pickles never reach the host's functions, URLs or wheels. */
            snprintf(late, sizeof late, "%s during a snapshot or restore", what);
            why = late;
        } else if ((rc = type == CI_FRAME_CALL      ? on_call(run, &why)
                         : type == CI_FRAME_FETCH   ? on_fetch(run, &why)
                         : type == CI_FRAME_INSTALL ? on_install(run, &why)
                                                    : on_input_request(run, &why)) >= 0) {
            ci_reader_reset(&run->rd);
            return rc;
        }
    } else if (run->rd.type == CI_FRAME_VIOLATION) {
        if (on_violation(run, &why) == 0) {
            ci_reader_reset(&run->rd);
            return 0;
        }
    } else if (run->rd.type == CI_FRAME_SIGNALED) {
        /* Only a namespace's init has signals to report (proto.h). */
        if (!(run->s->worker.layers & CI_SANDBOX_PIDNS))
            why = "a signal report from a worker without a PID namespace";
        else if (run->s->worker.signaled)
            why = "a second signal report";
        else if (ci_signaled_parse(run->rd.payload, run->rd.len, &run->s->worker.signaled,
                                   &why) == 0) {
            ci_reader_reset(&run->rd);
            return 0;
        }
    } else if (run->rd.type == CI_FRAME_ENDED && run->s->worker.task_pid > 0) {
        int st;
        unsigned long long cpu_us;

        if (ci_ended_parse(run->rd.payload, run->rd.len, &st, &cpu_us, &why) == 0) {
            ci_reader_reset(&run->rd);
            end_task(run, NULL, NULL, 1, st, cpu_us, 0);
            return 1;
        }
    } else if (run->rd.type == CI_FRAME_CHECKPOINTED && w->armed) {
        if (ci_count_parse(run->rd.payload, run->rd.len, (uint32_t)run->r->execution_count,
                           &why) == 0) {
            /* No more forks: the cell runs from here on. The frame may be
             * read late, after a quick cell: its checkpoint killed
             * already, or the worker dead and its checkpoint the
             * reaper's child. Two, and the cell forked too. */
            int children = ci_rollback_checkpoint_pid(w, &w->checkpoint_pid);

            ci_reader_reset(&run->rd);
            w->armed = 0;
            w->checkpoint = 1;
            if (children <= 1)
                return 0;
            run->rollback_ok = 0;
            end_killed(run, "ProtocolError", not_the_checkpoint);
            return 1;
        }
    } else if (run->rd.type == CI_FRAME_ROLLED_BACK && run->s->worker.checkpoint) {
        /* The checkpoint can be quicker to say so than the reaper. */
        if (ci_count_parse(run->rd.payload, run->rd.len,
                                 (uint32_t)run->r->execution_count, &why) == 0) {
            ci_reader_reset(&run->rd);
            end_task(run, NULL, NULL, 0, 0, 0, 1);
            return 1;
        }
    } else if (run->rd.type == CI_FRAME_RESULT && run->violation[0]) {
        why = "a result after a violation report";
    } else if (run->rd.type == CI_FRAME_RESULT && run->s->worker.signaled) {
        why = "a result after a signal report";
    } else if (run->rd.type == CI_FRAME_RESULT) {
        rc = ci_result_decode(run->r, run->rd.payload, run->rd.len, &run->s->cfg, &outcome,
                              &count, &why);
        if (rc == CI_OK && count != (uint32_t)run->r->execution_count) {
            rc = CI_EPROTO;
            why = "a result for another cell";
        }
        if (rc == CI_OK && (run->flags & CI_RUN_FLAG_CHECKPOINT) &&
            ci_rollback_children(&run->s->worker, run->s->worker.checkpoint_pid) != 0) {
            run->rollback_ok = 0;
            end_killed(run, "ProtocolError", not_the_checkpoint);
            return 1;
        }
        if (rc == CI_OK) {
            /* Everything the cell printed was written before the RESULT
             * frame: it is in the pipes now. */
            ci_drain_pipes(&run->drain);
            classify(run, outcome);
            return 1;
        }
        if (rc == CI_ENOMEM)
            why = "the host ran out of memory decoding the result";
    }
    snprintf(msg, sizeof msg, "the worker broke the protocol (%s); it was killed", why);
    end_killed(run, "ProtocolError", msg);
    return 1;
}

static void on_hard_deadline(struct run *run)
{
    char msg[200];
    if (run->interrupted == BY_REQUEST) {
        snprintf(msg, sizeof msg,
                 "the cell did not stop within %lu ms of being interrupted; "
                 "the worker was killed",
                 run->s->cfg.grace_ms);
        end_killed(run, "KeyboardInterrupt", msg);
        return;
    }
    snprintf(msg, sizeof msg,
             "the cell did not stop within %lu ms of being interrupted at the %lu ms timeout; "
             "the worker was killed",
             run->s->cfg.grace_ms, run->timeout_ms);
    end_killed(run, "TimeoutError", msg);
}

/* Without a pidfd (pidfd_open(2) came in Linux 5.3; valgrind 3.19 fails
 * it with ENOSYS) the worker's exit does not wake the poll, and a process
 * it left behind holding the channel would hide it until the deadline. So
 * the poll then wakes every NO_PIDFD_POLL_MS to ask (ci_worker_exited). */
#define NO_PIDFD_POLL_MS 50

/* How long a worker whose channel closed has to exit on its own. */
#define CLOSED_CHANNEL_MS 250

/*
 * After a quick run, the next one is likely quick too (a loop of small
 * cells): its result is then awaited by polling for up to QUICK_SPIN_US
 * before blocking, which spares the wake-up of this thread, as long again
 * as such a cell on a virtual machine. The worker does the same between
 * cells (await_next_cell in lib/worker/main.c).
 */
#define QUICK_RUN_US 1000
#define QUICK_SPIN_US 100

static void spin_for_frame(int channel)
{
    struct pollfd p = {.fd = channel, .events = POLLIN};
    int64_t end = ci_now_us() + QUICK_SPIN_US;

    do {
        if (poll(&p, 1, 0) != 0)
            return;
        sched_yield(); /* the worker may be waiting for this CPU */
    } while (ci_now_us() < end);
}

/* 1 if the frame is refused from its header alone (a type the worker never
 * sends during a run, a result, call or input request over its cap): waiting for its
 * payload would only make garbage look like a timeout. */
static int refused_by_header(const struct ci_reader *rd, const struct run *run)
{
    const struct ci_config *cfg = &run->s->cfg;

    switch (rd->type) {
    case CI_FRAME_RESULT:
        return rd->len > ci_result_frame_cap(cfg, run->r->snap.state_cap);
    case CI_FRAME_CALL:
        return rd->len > ci_call_frame_cap(cfg);
    case CI_FRAME_FETCH:
        return rd->len > ci_fetch_frame_cap(cfg);
    case CI_FRAME_INSTALL:
        return rd->len > sizeof(uint32_t) + CI_INSTALL_ARG_MAX;
    case CI_FRAME_VIOLATION:
    case CI_FRAME_SIGNALED:
        return 0;
    case CI_FRAME_ENDED:
        return rd->len != 16;
    case CI_FRAME_ROLLED_BACK:
    case CI_FRAME_CHECKPOINTED:
        return rd->len != 4;
    case CI_FRAME_INPUT_REQUEST:
        return rd->len > sizeof(uint32_t) + CI_INPUT_PROMPT_MAX;
    default:
        return 1;
    }
}

static const char over_the_cap[] =
    "the worker broke the protocol (a frame over the size limit); it was killed";

/* Waits for the RESULT frame, reading output all the while. */
static void await_result(struct run *run)
{
    struct ci_worker *w = &run->s->worker;

    if (run->s->last_run_us && run->s->last_run_us < QUICK_RUN_US)
        spin_for_frame(w->channel);
    for (;;) {
        struct pollfd p[6];
        int64_t now = ci_now_ms(), next;
        int n;

        if (run->interrupted != NOT_INTERRUPTED && now >= run->hard) {
            on_hard_deadline(run);
            return;
        }
        if (run->interrupted == NOT_INTERRUPTED && now >= run->deadline)
            interrupt(run, BY_TIMEOUT);
        next = run->interrupted != NOT_INTERRUPTED ? run->hard : run->deadline;
        p[0] = (struct pollfd){.fd = w->channel, .events = POLLIN};
        p[1] = (struct pollfd){.fd = run->drain.s[0].fd, .events = POLLIN};
        p[2] = (struct pollfd){.fd = run->drain.s[1].fd, .events = POLLIN};
        p[3] = (struct pollfd){.fd = w->pidfd, .events = POLLIN};
        p[4] = (struct pollfd){.fd = run->s->wake_fd, .events = POLLIN};
        /* A partial line waits a few milliseconds for its end. */
        if (ci_drain_partial_due(&run->drain) < next)
            next = ci_drain_partial_due(&run->drain);
        int64_t cap = w->pidfd >= 0 ? 1000 : NO_PIDFD_POLL_MS;
        p[5] = (struct pollfd){.fd = w->listener, .events = POLLIN};
        if (poll(p, 6, next <= now ? 0 : (int)(next - now > cap ? cap : next - now)) < 0 &&
            errno != EINTR) {
            end_killed(run, "WorkerDied", "poll failed on the worker's channel; it was killed");
            return;
        }
        if (run->interrupted == NOT_INTERRUPTED && interrupt_requested(run))
            interrupt(run, BY_REQUEST);
        if (p[5].revents)
            ci_rollback_answer(w); /* a fork: the checkpoint's, or refused */
        /* Only what poll found ready: a read of the others would only
         * say EAGAIN (output written before a frame is ready with it). */
        if (((p[1].revents && ci_drain_one(&run->drain, 0) < 0) ||
             (p[2].revents && ci_drain_one(&run->drain, 1) < 0))) {
            end_killed(run, "WorkerDied", "the host ran out of memory for the output; the worker was killed");
            return;
        }
        ci_drain_give_partial(&run->drain, ci_now_ms());
        n = p[0].revents ? ci_reader_pump(&run->rd, w->channel) : 0;
        if (n == 1) {
            if (on_frame(run))
                return;
            continue;
        }
        if (n == -2) {
            end_killed(run, "ProtocolError", over_the_cap);
            return;
        }
        if (run->rd.header_have == sizeof run->rd.header &&
            refused_by_header(&run->rd, run)) {
            /* Its payload is not read: only its header may be looked at. */
            if (run->rd.type == CI_FRAME_RESULT || run->rd.type == CI_FRAME_CALL ||
                run->rd.type == CI_FRAME_FETCH)
                end_killed(run, "ProtocolError", over_the_cap);
            else
                on_frame(run);
            return;
        }
        /* The channel closed, or the process exited: it died on its own.
         * Wait for its exit status, briefly: a worker that closed its
         * channel can never answer, whether or not it exits. */
        if (n == -1 || (p[3].revents & POLLIN) || (w->pidfd < 0 && ci_worker_exited(w))) {
            run->reap_by = now + CLOSED_CHANNEL_MS < run->hard ? now + CLOSED_CHANNEL_MS
                                                               : run->hard;
            end_killed(run, NULL, NULL);
            return;
        }
    }
}

/* 1 if the channel holds bytes nobody asked for. EOF is not counted: the
 * send then fails and the worker's end is reported as usual. */
static int unsolicited(int channel)
{
    char byte;
    ssize_t n;
    do
        n = recv(channel, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n > 0;
}

/* 1 if what waits on @channel starts with a report of the worker's
 * coming death (VIOLATION or SIGNALED): a thread a cell left running hit
 * the filter, or a signal, between runs. */
static int death_report_waiting(int channel)
{
    uint32_t type = waiting_frame(channel);
    return type == CI_FRAME_VIOLATION || type == CI_FRAME_SIGNALED || type == CI_FRAME_ENDED;
}

/* A scan of the workspace takes at most this long (a hostile cell can
 * fill it), so a run still ends within timeout + grace + 100 ms. */
#define SCAN_BUDGET_MS 50

/* Notes what the workspace holds before the cell may write: after the
 * previous run that is already known, unless something else wrote since.
 * That scan's time comes out of the run's timeout. */
static void files_before(ci_session *s, int workspace)
{
    if (!s->files.valid &&
        ci_scan_take(workspace, &s->files, ci_now_ms() + SCAN_BUDGET_MS) != CI_OK)
        return; /* out of memory (or descriptors): this run lists no files */
    ci_scan_settle(&s->files);
}

/* The files the run created or modified; the scan is the next run's
 * "before". A dead worker's run lists none, and the next run rescans. */
static void files_after(ci_session *s, int workspace, ci_result *r)
{
    struct ci_scan after = {0};

    if (!s->files.valid)
        return;
    if (r->status == CI_STATUS_KILLED ||
        ci_scan_take(workspace, &after, ci_now_ms() + SCAN_BUDGET_MS) != CI_OK) {
        s->files.valid = 0;
        return;
    }
    if (ci_scan_diff(&s->files, &after, r) != CI_OK)
        r->truncated |= CI_TRUNCATED_FILES;
    if (s->files.incomplete || after.incomplete)
        r->truncated |= CI_TRUNCATED_FILES;
    ci_scan_clear(&s->files);
    s->files = after;
}

/* Before a worker's first RUN: the FUNCTIONS frame, when the session has
 * host functions. 0, or -1 with errno. */
static int send_functions(struct run *run)
{
    struct ci_worker *w = &run->s->worker;
    unsigned char *p;
    size_t len;
    int rc;

    if (w->functions_sent || run->s->cfg.function_count == 0)
        return 0;
    if (ci_functions_frame(&run->s->cfg, &p, &len) != CI_OK) {
        errno = ENOMEM;
        return -1;
    }
    rc = ci_send_frame(w->channel, CI_FRAME_FUNCTIONS, p, len, NULL, 0, run->hard, &run->drain);
    free(p);
    w->functions_sent = rc == 0;
    return rc;
}

/* Before a worker's first RUN: the NETWORK frame, when the session allows
 * any URL. 0, or -1 with errno. */
static int send_network(struct run *run)
{
    struct ci_worker *w = &run->s->worker;
    uint32_t limits[2];
    int rc;

    if (w->network_sent || run->s->cfg.urls.count == 0)
        return 0;
    ci_network_frame(&run->s->cfg, limits);
    rc = ci_send_frame(w->channel, CI_FRAME_NETWORK, limits, sizeof limits, NULL, 0, run->hard,
                       &run->drain);
    w->network_sent = rc == 0;
    return rc;
}

/* Sends the RUN, @a (its head, then maybe more) and @b, and waits for
 * its end; the session is busy. */
static void run_cell(struct run *run, const void *a, size_t alen, const void *b, size_t blen)
{
    ci_session *s = run->s;
    struct ci_usage usage;

    /* The run's time starts here: the scan of the workspace counts, and
     * an interrupt during it is not lost. The deadline is a millisecond
     * late rather than early: ci_now_ms() truncates, and a cell stopped
     * at its timeout must have had all of it (wall_time_us included).
     * Numbered across restarts, so a request for a run of an earlier
     * worker never stops this one. */
    ci_worker_resume(&s->worker);
    ci_usage_begin(&s->worker, &usage);
    run->deadline = ci_now_ms() + (int64_t)run->timeout_ms + 1;
    run->hard = run->deadline + (int64_t)s->cfg.grace_ms;
    run->seq = ++s->run_seq;
    wake_open(s);
    atomic_store(&s->running, run->seq);
    files_before(s, run->workspace);
    if (death_report_waiting(s->worker.channel)) {
        /* Not sent: the worker is dying. Its report and its end are read
         * as a run's would be, within this run's deadlines. */
        await_result(run);
    } else if (unsolicited(s->worker.channel)) {
        /* Between runs the worker has nothing to say: bytes waiting now
         * were written by a cell (descriptor 3 is within its reach), e.g.
         * a result forged for this cell. */
        end_killed(run, "ProtocolError",
                   "the worker sent data while no cell was running (a cell wrote to the "
                   "protocol channel); it was killed");
    } else if (send_functions(run) < 0 || send_network(run) < 0 ||
               ci_send_frame(s->worker.channel, CI_FRAME_RUN, a, alen, b, blen, run->hard,
                             &run->drain) < 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "the cell could not be sent to the worker (%s); it was killed",
                 strerror(errno));
        end_killed(run, errno == ETIMEDOUT ? "TimeoutError" : NULL, errno == ETIMEDOUT ? msg : NULL);
    } else {
        await_result(run);
    }
    /* Its checkpoint is gone (killed before the RESULT, or taken over). */
    s->worker.armed = 0;
    s->worker.checkpoint = 0;
    s->worker.checkpoint_pid = 0;
    ci_worker_pause(&s->worker); /* at once: a thread the cell left must not run on */
    ci_drain_finish(&run->drain, run->r);
    atomic_store(&s->running, 0);
    wake_close(s);
    ci_usage_end(&s->worker, &usage, run->r);
    s->last_run_us = run->r->wall_us ? run->r->wall_us : 1;
    files_after(s, run->workspace, run->r);
}

/* The longest frame a run reads: a RESULT, a CALL or a FETCH
 * (refused_by_header holds each to its own cap). */
static size_t reader_cap(const struct ci_config *cfg, size_t state_cap)
{
    size_t result = ci_result_frame_cap(cfg, state_cap), call = ci_call_frame_cap(cfg);
    size_t fetch = cfg->urls.count ? ci_fetch_frame_cap(cfg) : 0;
    size_t cap = result > call ? result : call;
    return cap > fetch ? cap : fetch;
}

CI_API int ci_run_options_init(ci_run_options *opts, unsigned int version)
{
    if (!opts || version < 1 || version > CI_RUN_OPTIONS_VERSION)
        return CI_EINVAL;
    /* A program built with the version 1 header has no on_input. */
    memset(opts, 0, version == 1 ? offsetof(ci_run_options, on_input) : sizeof *opts);
    opts->version = version;
    return CI_OK;
}

static void run_parts(ci_session *s, ci_result *r, const ci_run_options *opts, const void *a,
                      size_t alen, const void *b, size_t blen, unsigned char **payload);

CI_API int ci_run_ex(ci_session *s, const char *code, const ci_run_options *opts,
                     ci_result **out)
{
    uint32_t head[2];
    ci_result *r;
    size_t len;
    int expected = 0;

    if (out)
        *out = NULL;
    if (!s)
        return CI_EINVAL;
    if (!code || !out) {
        return ci_err_set(&s->err, CI_EINVAL, "%s is NULL", !code ? "code" : "out");
    }
    if (opts && (opts->version < 1 || opts->version > CI_RUN_OPTIONS_VERSION)) {
        return ci_err_set(&s->err, CI_EINVAL,
                          "the run options' version is %u, not 1 to %d (ci_run_options_init)",
                          opts->version, CI_RUN_OPTIONS_VERSION);
    }
    if (opts && opts->timeout_ms > CI_TIMEOUT_MAX_MS) {
        return ci_err_set(&s->err, CI_EINVAL,
                          "the run options' timeout_ms is %lu, over a day (%lu)", opts->timeout_ms,
                          CI_TIMEOUT_MAX_MS);
    }
    if (!atomic_compare_exchange_strong(&s->busy, &expected, 1)) {
        return ci_err_set(&s->err, CI_EBUSY, "a run is already in progress on this session");
    }
    if (s->worker.pid <= 0) {
        ci_err_set(&s->err, CI_EDEAD, "the session's worker is dead; restart the session");
        atomic_store(&s->busy, 0);
        return CI_EDEAD;
    }
    if (ci_audit_check(s) != CI_OK) {
        atomic_store(&s->busy, 0);
        return CI_EIO;
    }
    len = strlen(code);
    if (len > CI_MAX_CODE_BYTES) {
        char limit[32];
        ci_format_size(limit, sizeof limit, CI_MAX_CODE_BYTES);
        ci_err_set(&s->err, CI_ETOOBIG, "code is %zu bytes, over the cell size limit of %s", len,
                   limit);
        atomic_store(&s->busy, 0);
        return CI_ETOOBIG;
    }

    /* Logged before it is sent: a cell the log cannot record never runs. */
    if (ci_audit_cell_start(s, s->execution_count + 1, code, len) != CI_OK) {
        atomic_store(&s->busy, 0);
        return CI_EIO;
    }
    if (!(r = ci_result_new())) {
        atomic_store(&s->busy, 0);
        return CI_ENOMEM;
    }
    r->execution_count = ++s->execution_count;
    head[0] = (uint32_t)r->execution_count;
    head[1] = opts && opts->version >= 2 && opts->on_input ? CI_RUN_FLAG_INPUT : 0;
    if (s->worker.listener >= 0) {
        /* One fork may pass now, the checkpoint's (rollback.c). */
        head[1] |= CI_RUN_FLAG_CHECKPOINT;
        s->worker.armed = 1;
        s->worker.checkpoint = 0;
    }
    run_parts(s, r, opts, head, sizeof head, code, len, NULL);
    /* A failure marks the session: its next call says so (ci_audit_check). */
    ci_audit_cell(s, code, len, r);
    *out = r;
    atomic_store(&s->busy, 0);
    return CI_OK;
}

/*
 * Runs @r's RUN on @s, busy: @a is its head (count, flags) and maybe more,
 * @b the rest. With @payload (a SNAPSHOT run), *@payload receives the
 * RESULT frame's payload, which r->snap.state points into, or NULL.
 */
static void run_parts(ci_session *s, ci_result *r, const ci_run_options *opts, const void *a,
                      size_t alen, const void *b, size_t blen, unsigned char **payload)
{
    struct run run;
    uint32_t head[2];

    memcpy(head, a, sizeof head);
    memset(&run, 0, sizeof run);
    run.s = s;
    run.r = r;
    run.flags = head[1];
    run.timeout_ms = opts && opts->timeout_ms ? opts->timeout_ms : s->cfg.timeout_ms;
    ci_drain_init(&run.drain, s->worker.out, s->worker.err, &r->out, &r->err,
                  s->cfg.output_limit, &r->truncated);
    run.drain.fn = opts ? opts->on_output : NULL;
    run.drain.payload = opts ? opts->payload : NULL;
    run.workspace = ci_workspace_open(s);
    run.drain.spill_dir = run.workspace;
    run.drain.spill_cap = s->cfg.spill_limit < s->cfg.file_limit ? s->cfg.spill_limit
                                                                 : s->cfg.file_limit;
    if (head[1] & (CI_RUN_FLAG_SNAPSHOT | CI_RUN_FLAG_RESTORE))
        run.drain.spill_cap = 0; /* what a pickle prints is dropped: no spill file */
    run.drain.session = s;
    run.drain.count = r->execution_count;
    run.on_input = head[1] & CI_RUN_FLAG_INPUT ? opts->on_input : NULL;
    run.rollback_ok = (head[1] & CI_RUN_FLAG_CHECKPOINT) != 0;
    run.payload = opts ? opts->payload : NULL;
    ci_reader_init(&run.rd, reader_cap(&s->cfg, r->snap.state_cap));
    run_cell(&run, a, alen, b, blen);
    ci_close_fd(&run.workspace);
    if (payload) {
        *payload = r->status != CI_STATUS_KILLED ? run.rd.payload : NULL;
        if (*payload)
            run.rd.payload = NULL;
    }
    ci_reader_reset(&run.rd);
}

int ci_run_internal(ci_session *s, uint32_t flags, const void *a, size_t alen, const void *b,
                    size_t blen, size_t state_cap, ci_result **out, unsigned char **payload)
{
    unsigned char *buf;
    uint32_t head[2];
    ci_result *r;

    *out = NULL;
    if (payload)
        *payload = NULL;
    if (!(r = ci_result_new()) || !(buf = malloc(sizeof head + alen))) {
        ci_result_free(r);
        return CI_ENOMEM;
    }
    /* Numbered apart from the cells (proto.h), and the count of the
     * cells stays as it was. */
    s->internal_runs = (s->internal_runs + 1) & ~CI_RUN_COUNT_INTERNAL;
    head[0] = CI_RUN_COUNT_INTERNAL | (s->internal_runs ? s->internal_runs : 1);
    head[1] = flags;
    r->execution_count = (int)head[0];
    r->snap.state_cap = state_cap;
    memcpy(buf, head, sizeof head);
    if (alen)
        memcpy(buf + sizeof head, a, alen);
    run_parts(s, r, NULL, buf, sizeof head + alen, b, blen, payload);
    free(buf);
    *out = r;
    return CI_OK;
}

CI_API int ci_run_stream(ci_session *s, const char *code, ci_output_fn fn, void *payload,
                         ci_result **out)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    opts.on_output = fn;
    opts.payload = payload;
    return ci_run_ex(s, code, &opts, out);
}

CI_API int ci_run(ci_session *s, const char *code, ci_result **out)
{
    return ci_run_ex(s, code, NULL, out);
}

CI_API int ci_session_interrupt(ci_session *s)
{
    static const uint64_t one = 1;
    int seq, fd, saved_errno = errno; /* a signal handler's caller keeps its errno */

    if (!s)
        return CI_EINVAL;
    seq = atomic_load(&s->running);
    if (seq == 0)
        return 0;
    /* Names the run, so a request that comes as the run ends cannot stop
     * the next one. Counted while it uses the eventfd (wake_close). */
    atomic_store(&s->interrupt_for, seq);
    atomic_fetch_add(&s->wake_users, 1);
    fd = atomic_load(&s->wake_fd);
    while (fd >= 0 && write(fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    atomic_fetch_sub(&s->wake_users, 1);
    errno = saved_errno;
    return 1;
}
