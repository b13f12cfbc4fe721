/*
 * One run: send the cell, wait with a deadline while reading its output,
 * interrupt at the timeout, kill after the grace period, collect.
 *
 * ci_run returns within timeout + grace (+ the time to reap a killed
 * process) whatever the worker does: every wait below is bounded by the
 * run's hard deadline, and the worker's frames are read incrementally and
 * capped, so a hostile worker can neither stall nor flood the host.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

    ci_drain_pipes(&run->drain); /* what it wrote before it went */
    if (why) /* we decided: it dies now */
        kill(s->worker.pid, SIGKILL);
    ci_worker_reap(&s->worker, run->hard, &end_name, end, sizeof end);
    if (why)
        snprintf(value, sizeof value, "%s", why);
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

/* Handles one whole frame from the worker. 1: the run is over. */
static int on_frame(struct run *run)
{
    uint32_t outcome = CI_OUTCOME_ERROR, count = 0;
    const char *why = "unexpected frame type";
    char msg[160];
    int rc;

    if (run->rd.type == CI_FRAME_RESULT) {
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
            on_frame(run);
            return;
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
    if (ci_send_frame(s->worker.channel, CI_FRAME_RUN, &count, sizeof count, code, len,
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
