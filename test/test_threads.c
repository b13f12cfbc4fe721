/*
 * Sessions and threads: sessions used concurrently from several threads,
 * a session outliving the thread that made it, and a second concurrent
 * run on one session refused with CI_EBUSY.
 *
 * cmocka's asserts must run on the main thread, so worker threads only
 * record what they saw and the main thread checks it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

#define NTHREADS 4

struct job {
    int id;
    pthread_barrier_t *barrier;
    const char *volatile phase; /* where the thread is, for a hang report */
    int new_rc, run_rc, status_ok;
    int pid;
    char value[64];
    char out[64];
    char err[256];
};

/* Runs a few cells that depend on the thread's id; keeps the last value. */
static void *session_job(void *arg)
{
    struct job *j = arg;
    ci_session *s = NULL;
    char code[256];
    ci_result *r = NULL;

    j->phase = "in ci_session_new";
    j->new_rc = ci_session_new(&s, NULL);
    if (j->new_rc != CI_OK)
        snprintf(j->err, sizeof j->err, "%s", ci_session_errmsg(NULL));
    j->pid = ci_session_pid(s);
    j->phase = "waiting for the other threads' ci_session_new";
    pthread_barrier_wait(j->barrier);
    if (j->new_rc != CI_OK) {
        j->phase = "done";
        return NULL;
    }
    j->phase = "running cells";
    j->status_ok = 1;
    snprintf(code, sizeof code, "acc = %d", j->id);
    if ((j->run_rc = ci_run(s, code, &r)) != CI_OK)
        goto out;
    j->status_ok &= ci_result_status(r) == CI_STATUS_OK;
    ci_result_free(r);
    for (int i = 0; i < 10; i++) {
        snprintf(code, sizeof code, "import time\ntime.sleep(0.01)\nacc = acc * 3 + %d", j->id);
        if ((j->run_rc = ci_run(s, code, &r)) != CI_OK)
            goto out;
        j->status_ok &= ci_result_status(r) == CI_STATUS_OK;
        ci_result_free(r);
    }
    snprintf(code, sizeof code, "print('thread', %d)\nacc", j->id);
    if ((j->run_rc = ci_run(s, code, &r)) != CI_OK)
        goto out;
    j->status_ok &= ci_result_status(r) == CI_STATUS_OK;
    snprintf(j->value, sizeof j->value, "%s", ci_result_value(r) ? ci_result_value(r) : "(null)");
    snprintf(j->out, sizeof j->out, "%s", ci_result_stdout(r, NULL));
    ci_result_free(r);
out:
    if (j->run_rc != CI_OK)
        snprintf(j->err, sizeof j->err, "ci_run: %s", ci_session_errmsg(s));
    j->phase = "in ci_session_free";
    ci_session_free(s);
    j->phase = "done";
    return NULL;
}

static void test_sessions_on_four_threads_keep_their_own_state(void **state)
{
    /* Static: a thread that hangs must not be left pointing at a dead
     * stack frame when the test gives up on it. */
    static pthread_t t[NTHREADS];
    static struct job jobs[NTHREADS];
    static pthread_barrier_t barrier;

    assert_int_equal(pthread_barrier_init(&barrier, NULL, NTHREADS), 0);
    for (int i = 0; i < NTHREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].id = i + 1;
        jobs[i].barrier = &barrier;
        jobs[i].phase = "starting";
        assert_int_equal(pthread_create(&t[i], NULL, session_job, &jobs[i]), 0);
    }
    /* Each thread needs a few seconds at most; half a minute means a hang. */
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 30;
    int hung = 0;
    for (int i = 0; i < NTHREADS; i++) {
        if (pthread_timedjoin_np(t[i], NULL, &deadline) != 0) {
            fprintf(stderr, "thread %d hung %s\n", jobs[i].id, jobs[i].phase);
            hung++;
        }
    }
    if (hung)
        fail_msg("%d of %d threads hung", hung, NTHREADS);
    pthread_barrier_destroy(&barrier);

    for (int i = 0; i < NTHREADS; i++) {
        struct job *j = &jobs[i];
        if (j->new_rc != CI_OK || j->run_rc != CI_OK)
            fail_msg("thread %d: new %d, run %d: %s", j->id, j->new_rc, j->run_rc, j->err);
        assert_true(j->status_ok);
        /* acc = id, then ten times acc = 3 * acc + id: id * (3^11 - 1) / 2. */
        long want = (long)j->id * (177147 - 1) / 2;
        char buf[64];
        snprintf(buf, sizeof buf, "%ld", want);
        assert_string_equal(j->value, buf);
        snprintf(buf, sizeof buf, "thread %d\n", j->id);
        assert_string_equal(j->out, buf);
        for (int k = 0; k < i; k++)
            assert_int_not_equal(j->pid, jobs[k].pid);
    }
}

/* ------------------------------------------------ short-lived creator */

struct creator {
    ci_session *s;
    int rc;
    char err[256];
};

static void *create_session(void *arg)
{
    struct creator *c = arg;
    c->rc = ci_session_new(&c->s, NULL);
    if (c->rc != CI_OK)
        snprintf(c->err, sizeof c->err, "%s", ci_session_errmsg(NULL));
    return NULL;
}

static void test_session_outlives_the_thread_that_made_it(void **state)
{
    struct creator c = {0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, create_session, &c), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (c.rc != CI_OK)
        fail_msg("ci_session_new on a thread: %d: %s", c.rc, c.err);

    int pid = ci_session_pid(c.s);
    assert_true(pid > 0);
    /* A parent-death signal tied to that thread would have fired by now. */
    usleep(300 * 1000);
    assert_int_equal(kill(pid, 0), 0);
    h_expect(c.s, "21 * 2", "42", "");
    assert_int_equal(ci_session_pid(c.s), pid);
    ci_session_free(c.s);
}

struct restarter {
    ci_session *s;
    int rc;
};

static void *restart_session(void *arg)
{
    struct restarter *r = arg;
    r->rc = ci_session_restart(r->s);
    return NULL;
}

static void test_worker_restarted_on_a_short_lived_thread_survives(void **state)
{
    ci_session *s = h_session(NULL);
    struct restarter rs = {s, -99};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, restart_session, &rs), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (rs.rc != CI_OK)
        fail_msg("ci_session_restart on a thread: %d: %s", rs.rc, ci_session_errmsg(s));

    int pid = ci_session_pid(s);
    assert_true(pid > 0);
    usleep(300 * 1000);
    assert_int_equal(kill(pid, 0), 0);
    h_expect(s, "'restarted elsewhere'", "'restarted elsewhere'", "");
    ci_session_free(s);
}

/* ------------------------------------------------------------- EBUSY */

struct busy {
    ci_session *s;
    pthread_barrier_t *started;
    int rc;
    ci_result *r;
};

static void *slow_run(void *arg)
{
    struct busy *b = arg;
    pthread_barrier_wait(b->started);
    b->rc = ci_run(b->s, "import time\ntime.sleep(1)\n'slow'", &b->r);
    return NULL;
}

static void test_concurrent_run_on_one_session_is_ebusy(void **state)
{
    ci_session *s = h_session(NULL);
    pthread_barrier_t started;
    struct busy b = {s, &started, -99, NULL};
    pthread_t t;

    assert_int_equal(pthread_barrier_init(&started, NULL, 2), 0);
    assert_int_equal(pthread_create(&t, NULL, slow_run, &b), 0);
    pthread_barrier_wait(&started);
    /* Let the other thread get into its one-second cell. */
    usleep(300 * 1000);

    ci_result *r = (ci_result *)&r;
    int rc = ci_run(s, "'second'", &r);
    int restart_rc = ci_session_restart(s);

    assert_int_equal(pthread_join(t, NULL), 0);
    pthread_barrier_destroy(&started);
    assert_int_equal(rc, CI_EBUSY);
    assert_null(r);
    assert_int_equal(restart_rc, CI_EBUSY);

    assert_int_equal(b.rc, CI_OK);
    assert_int_equal(ci_result_status(b.r), CI_STATUS_OK);
    h_assert_str(ci_result_value(b.r), "'slow'");
    ci_result_free(b.r);
    /* The refused calls did not disturb the session. */
    h_expect(s, "'after'", "'after'", "");
    ci_session_free(s);
}

/* ------------------------------------------------ signals in the host */

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    ticks++;
}

/* Stops the timer and puts @old back as SIGALRM's action. A tick the
 * timer raised before it stopped may still be pending (valgrind delivers
 * signals late): taken while SIGALRM is blocked, before the default
 * action, which kills, is back. */
static void stop_alarms(const struct sigaction *old)
{
    struct itimerval off = {{0, 0}, {0, 0}};
    struct timespec zero = {0, 0};
    sigset_t alrm;

    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    setitimer(ITIMER_REAL, &off, NULL);
    while (sigtimedwait(&alrm, NULL, &zero) == SIGALRM)
        ;
    sigaction(SIGALRM, old, NULL);
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
}

static ci_session *interrupted_by_alarm;

static void interrupt_on_alarm(int sig)
{
    ticks++;
    ci_session_interrupt(interrupted_by_alarm);
}

static void test_interrupt_from_a_signal_handler_never_hangs_a_run(void **state)
{
    /* ci_session_interrupt is safe in a signal handler, on the thread
     * that runs too: a 100 us timer whose handler interrupts lands in
     * every part of a run (its start and end included, where the run
     * makes and closes the eventfd the call writes) and must never hang
     * it. Each cell ends either normally or interrupted. */
    struct sigaction sa = {0}, old;
    struct itimerval it = {{0, 100}, {0, 100}};
    int ok = 0, interrupted = 0, other = 0;

    interrupted_by_alarm = h_session(NULL);
    ticks = 0;
    sa.sa_handler = interrupt_on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
    for (int i = 0; i < 300; i++) {
        ci_result *r = NULL;
        int rc = ci_run(interrupted_by_alarm, "pass", &r);

        if (rc == CI_OK && ci_result_status(r) == CI_STATUS_OK)
            ok++;
        else if (rc == CI_OK && ci_result_status(r) == CI_STATUS_INTERRUPTED)
            interrupted++;
        else
            other++;
        ci_result_free(r);
    }
    stop_alarms(&old);
    print_message("%d cells: %d ok, %d interrupted, %d ticks\n", ok + interrupted + other, ok,
                  interrupted, (int)ticks);
    assert_int_equal(other, 0);
    assert_int_equal(ok + interrupted, 300);
    assert_true(interrupted > 0);
    h_expect(interrupted_by_alarm, "'after'", "'after'", "");
    ci_session_free(interrupted_by_alarm);
}

static void test_host_signals_do_not_disturb_new_and_run(void **state)
{
    /* A handler without SA_RESTART and a 5 ms timer: every blocking call
     * the library makes on this thread sees EINTR. */
    struct sigaction sa = {0}, old;
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct itimerval it = {{0, 5000}, {0, 5000}};
    assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);

    ci_session *s = NULL;
    int rc = ci_session_new(&s, NULL);
    ci_result *r = NULL;
    int run_rc = rc == CI_OK ? ci_run(s, "import time\ntime.sleep(0.3)\nprint('p')\n6 * 7", &r)
                             : -99;
    void *data = NULL;
    size_t len = 0;
    int put_rc = rc == CI_OK ? ci_session_put_file(s, "sig.txt", "abc", 3) : -99;
    int get_rc = rc == CI_OK ? ci_session_get_file(s, "sig.txt", &data, &len) : -99;

    stop_alarms(&old);

    if (rc != CI_OK)
        fail_msg("ci_session_new under signals: %d: %s", rc, ci_session_errmsg(NULL));
    assert_true(ticks > 10);
    assert_int_equal(run_rc, CI_OK);
    if (ci_result_status(r) != CI_STATUS_OK)
        h_dump(r);
    assert_int_equal(ci_result_status(r), CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "42");
    assert_string_equal(ci_result_stdout(r, NULL), "p\n");
    assert_int_equal(put_rc, CI_OK);
    assert_int_equal(get_rc, CI_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(data, "abc", 3);
    ci_free(data);
    ci_result_free(r);
    ci_session_free(s);
}

int main(void)
{
    h_watchdog(150);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sessions_on_four_threads_keep_their_own_state),
        cmocka_unit_test(test_session_outlives_the_thread_that_made_it),
        cmocka_unit_test(test_worker_restarted_on_a_short_lived_thread_survives),
        cmocka_unit_test(test_concurrent_run_on_one_session_is_ebusy),
        cmocka_unit_test(test_host_signals_do_not_disturb_new_and_run),
        cmocka_unit_test(test_interrupt_from_a_signal_handler_never_hangs_a_run),
    };
    return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
