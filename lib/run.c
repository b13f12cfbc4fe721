/*
 * One run: send the cell, wait with a deadline while reading its output,
 * interrupt at the timeout, kill after the grace period, collect.
 *
 * ci_run returns within timeout + grace (+ at most 50 ms to see a killed
 * worker go; a slower one is reaped in the background) whatever the worker
 * does: every wait below is bounded by the run's hard deadline, output is
 * drained in bounded steps, and the worker's frames are read incrementally
 * and capped, so a hostile worker can neither stall nor flood the host.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

/* The RESULT frame holds four text fields of at most output_limit bytes
 * each, plus small ones. */
static size_t result_frame_cap(const struct ci_config *cfg)
{
    return 4 * cfg->output_limit + 4096;
}

struct run {
    ci_session *s;
    ci_result *r;
    struct ci_drain drain;
    struct ci_reader rd;
    int64_t deadline;  /* the timeout: interrupt */
    int64_t hard;      /* timeout + grace: kill */
    int interrupted;
    char violation[CI_VIOLATION_NAME_MAX + 1]; /* a VIOLATION frame's name */
};

static int set_text(char **slot, const char *text)
{
    free(*slot);
    *slot = ci_strdup(text);
    return *slot ? 0 : -1;
}

/* The worker is gone or must go: kill it if needed, reap it, and say why
 * in the result. The session is dead until restarted. */
static void end_killed(struct run *run, const char *name, const char *why)
{
    ci_session *s = run->s;
    const char *end_name;
    char end[256], value[512];

    if (why) /* we decided: it dies now, before a flood can delay us */
        kill(s->worker.pid, SIGKILL);
    ci_drain_pipes(&run->drain); /* what it wrote before it went */
    ci_worker_reap(&s->worker, run->hard, &end_name, end, sizeof end);
    if (why)
        snprintf(value, sizeof value, "%s", why);
    else if (run->violation[0] && strcmp(end_name, "SandboxViolation") == 0)
        snprintf(value, sizeof value,
                 "the cell made a forbidden system call (%s); the worker was killed",
                 run->violation);
    else
        snprintf(value, sizeof value, "%s", end);
    run->r->status = CI_STATUS_KILLED;
    free(run->r->value);
    run->r->value = NULL;
    free(run->r->traceback);
    run->r->traceback = NULL;
    if (set_text(&run->r->error_name, name ? name : end_name) < 0 ||
        set_text(&run->r->error_value, value) < 0) {
        /* Out of memory: the status alone still tells the truth. */
    }
    ci_set_errmsg(s, "cell %d killed its worker: %s: %s", run->r->execution_count,
                  run->r->error_name ? run->r->error_name : "", value);
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
    /* An interrupt we sent is a timeout, whatever the cell made of it;
     * a KeyboardInterrupt the cell raised itself stays an error. */
    if (run->interrupted) {
        r->status = CI_STATUS_TIMEOUT;
        free(r->value);
        r->value = NULL;
        snprintf(msg, sizeof msg, "the cell ran past the %lu ms timeout and was interrupted",
                 run->s->cfg.timeout_ms);
        set_text(&r->error_name, "TimeoutError");
        set_text(&r->error_value, msg);
    }
}

/* A VIOLATION frame: u32 syscall number, then its name. 0 if it is well
 * formed (the name is kept for when the worker dies), else -1 with @why. */
static int on_violation(struct run *run, const char **why)
{
    const unsigned char *p = run->rd.payload;
    size_t len = run->rd.len;
    uint32_t nr;

    if (run->violation[0]) {
        *why = "a second violation report";
        return -1;
    }
    if (len < sizeof nr + 1 || len > sizeof nr + CI_VIOLATION_NAME_MAX) {
        *why = "a violation report of the wrong length";
        return -1;
    }
    memcpy(&nr, p, sizeof nr);
    if (nr >= CI_VIOLATION_NR_MAX) {
        *why = "a violation report for an unknown system call";
        return -1;
    }
    for (size_t i = sizeof nr; i < len; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_')) {
            *why = "a violation report with a malformed name";
            return -1;
        }
    memcpy(run->violation, p + sizeof nr, len - sizeof nr);
    run->violation[len - sizeof nr] = '\0';
    return 0;
}

/* Handles one whole frame from the worker. 1: the run is over; 0: wait
 * on (a VIOLATION: the worker is about to die). */
static int on_frame(struct run *run)
{
    uint32_t outcome = CI_OUTCOME_ERROR, count = 0;
    const char *why = "unexpected frame type";
    char msg[160];
    int rc;

    if (run->rd.type == CI_FRAME_VIOLATION) {
        if (on_violation(run, &why) == 0) {
            ci_reader_reset(&run->rd);
            return 0;
        }
    } else if (run->rd.type == CI_FRAME_RESULT && run->violation[0]) {
        why = "a result after a violation report";
    } else if (run->rd.type == CI_FRAME_RESULT) {
        rc = ci_result_decode(run->r, run->rd.payload, run->rd.len, run->s->cfg.output_limit,
                              &outcome, &count, &why);
        if (rc == CI_OK && count != (uint32_t)run->r->execution_count) {
            rc = CI_EPROTO;
            why = "a result for another cell";
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
    snprintf(msg, sizeof msg,
             "the cell did not stop within %lu ms of being interrupted at the %lu ms timeout; "
             "the worker was killed",
             run->s->cfg.grace_ms, run->s->cfg.timeout_ms);
    end_killed(run, "Timeout", msg);
}

/* Waits for the RESULT frame, reading output all the while. */
static void await_result(struct run *run)
{
    struct ci_worker *w = &run->s->worker;
    for (;;) {
        struct pollfd p[4];
        int64_t now = ci_now_ms(), next;
        int n;

        if (now >= run->hard) {
            on_hard_deadline(run);
            return;
        }
        if (!run->interrupted && now >= run->deadline) {
            /* To the main thread, where Python raises KeyboardInterrupt:
             * a thread the cell started may not block SIGINT, and a
             * signal it took would not wake the main thread's sleep. */
            syscall(SYS_tgkill, w->pid, w->pid, SIGINT);
            run->interrupted = 1;
        }
        next = run->interrupted ? run->hard : run->deadline;
        p[0] = (struct pollfd){.fd = w->channel, .events = POLLIN};
        p[1] = (struct pollfd){.fd = run->drain.fd[0], .events = POLLIN};
        p[2] = (struct pollfd){.fd = run->drain.fd[1], .events = POLLIN};
        p[3] = (struct pollfd){.fd = w->pidfd, .events = POLLIN};
        if (poll(p, 4, (int)(next - now > 1000 ? 1000 : next - now)) < 0 && errno != EINTR) {
            end_killed(run, "WorkerDied", "poll failed on the worker's channel; it was killed");
            return;
        }
        if (ci_drain_pipes(&run->drain) < 0) {
            end_killed(run, "WorkerDied", "the host ran out of memory for the output; the worker was killed");
            return;
        }
        n = ci_reader_pump(&run->rd, w->channel);
        if (n == 1) {
            if (on_frame(run))
                return;
            continue;
        }
        if (n == -2) {
            end_killed(run, "ProtocolError",
                       "the worker broke the protocol (a frame over the size limit); it was killed");
            return;
        }
        /* The channel closed, or the process exited: it died on its own.
         * Wait (bounded by the run) for its exit status. */
        if (n == -1 || (p[3].revents & POLLIN)) {
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

CI_API int ci_run(ci_session *s, const char *code, ci_result **out)
{
    struct run run;
    uint32_t count;
    size_t len;
    int expected = 0;

    if (out)
        *out = NULL;
    if (!s || !code || !out) {
        if (s)
            ci_set_errmsg(s, "ci_run: NULL argument");
        return CI_EINVAL;
    }
    if (!atomic_compare_exchange_strong(&s->busy, &expected, 1)) {
        ci_set_errmsg(s, "ci_run: a run is already in progress on this session");
        return CI_EBUSY;
    }
    if (s->worker.pid <= 0) {
        ci_set_errmsg(s, "ci_run: the worker is dead; call ci_session_restart");
        atomic_store(&s->busy, 0);
        return CI_EDEAD;
    }
    len = strlen(code);
    if (len > CI_MAX_CODE_BYTES) {
        ci_set_errmsg(s, "ci_run: the cell is %zu bytes, over the limit of %u", len,
                      CI_MAX_CODE_BYTES);
        atomic_store(&s->busy, 0);
        return CI_ETOOBIG;
    }

    memset(&run, 0, sizeof run);
    run.s = s;
    if (!(run.r = ci_result_new())) {
        atomic_store(&s->busy, 0);
        return CI_ENOMEM;
    }
    run.r->execution_count = ++s->execution_count;
    run.drain = (struct ci_drain){{s->worker.out, s->worker.err},
                                  {&run.r->out, &run.r->err},
                                  s->cfg.output_limit,
                                  &run.r->truncated};
    ci_reader_init(&run.rd, result_frame_cap(&s->cfg));
    run.deadline = ci_now_ms() + (int64_t)s->cfg.timeout_ms;
    run.hard = run.deadline + (int64_t)s->cfg.grace_ms;

    count = (uint32_t)run.r->execution_count;
    if (unsolicited(s->worker.channel)) {
        /* Between runs the worker has nothing to say: bytes waiting now
         * were written by a cell (descriptor 3 is within its reach), e.g.
         * a result forged for this cell. */
        end_killed(&run, "ProtocolError",
                   "the worker sent data while no cell was running (a cell wrote to the "
                   "protocol channel); it was killed");
    } else if (ci_send_frame(s->worker.channel, CI_FRAME_RUN, &count, sizeof count, code, len,
                             run.hard, &run.drain) < 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "the cell could not be sent to the worker (%s); it was killed",
                 strerror(errno));
        end_killed(&run, errno == ETIMEDOUT ? "Timeout" : NULL, errno == ETIMEDOUT ? msg : NULL);
    } else {
        await_result(&run);
    }
    ci_reader_reset(&run.rd);
    *out = run.r;
    atomic_store(&s->busy, 0);
    return CI_OK;
}
