/*
 * Signals out of the worker: at the host, at every process (-1), at the
 * worker's and the host's process groups, at pid 1, at a sentinel process
 * the test forked into its own process group, at another session's worker;
 * by kill, killpg, tgkill, rt_sigqueueinfo, pidfd_send_signal and SIGIO.
 * After each the host checks that it is alive with its secret environment
 * intact, caught no signal, and that the sentinel and the other worker
 * are alive.
 */

#include "attack.h"

static ci_session *S, *B; /* B: the other session, a target */
static pid_t sentinel = -1;
static char env_copy[128];
static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
    caught = sig;
}

static int group_setup(void **state)
{
    snprintf(env_copy, sizeof env_copy, "%s", getenv(A_ENV_NAME));
    /* Signals an attack could send that would not kill the host at once:
     * caught, so a delivery is seen rather than fatal. */
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGTERM, SIGHUP, SIGINT, SIGUSR1, SIGUSR2, SIGIO, SIGURG, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &sa, NULL);
    /* The sentinel: in the host's process group, dies with the host. */
    if ((sentinel = a_sentinel_start()) < 0)
        return -1;
    if (a_group_session(&S, NULL) != 0 || !(B = a_session_new(NULL)))
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    ci_session_free(B);
    a_sentinel_stop(&sentinel);
    return 0;
}

/* The host is alive (we are here), its secret environment is intact, it
 * caught no signal, and the sentinel and the other worker live. */
static void assert_everyone_alive(void)
{
    if (caught)
        fail_msg("ATTACK SUCCEEDED: the host caught signal %d", (int)caught);
    const char *env = getenv(A_ENV_NAME);
    if (!env || strcmp(env, env_copy) != 0)
        fail_msg("the host's secret environment variable changed");
    int status;
    pid_t w = waitpid(sentinel, &status, WNOHANG);
    if (w == sentinel)
        fail_msg("ATTACK SUCCEEDED: the sentinel process died (status 0x%x)", status);
    assert_int_equal(w, 0);
    assert_int_equal(kill(sentinel, 0), 0);
    int bpid = ci_session_pid(B);
    if (bpid <= 0 || kill(bpid, 0) != 0)
        fail_msg("ATTACK SUCCEEDED: the other session's worker died");
    h_expect(B, "'B lives'", "'B lives'", NULL);
}

static void attack(const char *cell)
{
    a_stopped(S, cell, A_OSERR "|ProcessLookupError");
    assert_everyone_alive();
}

static void test_sigkill_to_the_host(void **state)
{
    attack("import os, signal\nos.kill(HOST_PID, signal.SIGKILL)");
}

static void test_sigkill_to_its_parent_as_it_sees_it(void **state)
{
    /* kill(getppid()): the host outside a pid namespace of the worker's
     * own, 0 (its own process group) inside one. */
    attack("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)");
}

static void test_sigterm_to_the_host(void **state)
{
    attack("import os, signal\nos.kill(HOST_PID, signal.SIGTERM)");
}

static void test_sigkill_to_every_process(void **state)
{
    /* kill(-1): as root, every process on the machine but init. */
    attack("import os, signal\nos.kill(-1, signal.SIGKILL)");
}

static void test_killpg_of_its_own_group(void **state)
{
    attack("import os, signal\nos.killpg(0, signal.SIGKILL)");
}

static void test_killpg_of_the_hosts_group(void **state)
{
    /* The host's process group holds the sentinel (and make, and the
     * shell that ran it). Named by the host: the worker may not be able
     * to ask getpgid(HOST_PID), and the attack is at the group. */
    a_cell = h_fmt("import os, signal\nos.killpg(%d, signal.SIGKILL)", (int)getpgrp());
    attack(a_cell);
}

static void test_sigterm_to_init(void **state)
{
    /* Outside a PID namespace of the worker's own, pid 1 is the
     * machine's init; inside, the worker itself, which then ends as any
     * process would by its own SIGTERM (lib/worker/init.c). */
    if (!(ci_session_sandbox(S) & CI_SANDBOX_PIDNS)) {
        attack("import os, signal\nos.kill(1, signal.SIGTERM)");
        return;
    }
    ci_result *r = h_run(S, "import os, signal\nassert os.getpid() == 1\n"
                            "os.kill(1, signal.SIGTERM)");
    if (ci_result_status(r) != CI_STATUS_KILLED ||
        strcmp(ci_result_error_name(r) ? ci_result_error_name(r) : "", "WorkerDied") != 0 ||
        !strstr(ci_result_error_value(r) ? ci_result_error_value(r) : "", "SIGTERM")) {
        h_dump(r);
        fail_msg("kill(1, SIGTERM) from pid 1 of its own namespace did not end the worker "
                 "by SIGTERM");
    }
    ci_result_free(r);
    a_alive(S);
    assert_everyone_alive();
}

static void test_sigkill_to_the_sentinel(void **state)
{
    a_cell = h_fmt("import os, signal\nos.kill(%d, signal.SIGKILL)", (int)sentinel);
    attack(a_cell);
}

static void test_sigkill_to_another_sessions_worker(void **state)
{
    a_cell = h_fmt("import os, signal\nos.kill(%d, signal.SIGKILL)", ci_session_pid(B));
    attack(a_cell);
}

static void test_tgkill_of_the_hosts_main_thread(void **state)
{
    a_cell = h_cell_then("sc", "import signal\nsc(234, HOST_PID, HOST_PID, int(signal.SIGKILL))");
    attack(a_cell);
}

static void test_rt_sigqueueinfo_to_the_host(void **state)
{
    a_cell = h_cells("sc", "signals_rt_sigqueueinfo_to_the_host");
    attack(a_cell);
}

static void test_pidfd_send_signal_to_the_host(void **state)
{
    a_cell = h_cells("sc", "signals_pidfd_send_signal_to_the_host");
    attack(a_cell);
}

static void test_sigio_to_the_host_through_f_setown(void **state)
{
    /* A pipe that signals its owner on every write; the owner the host. */
    a_cell = h_cell("signals_sigio_to_the_host");
    attack(a_cell);
}

/* ------------------------------------------- the queue of pending signals */

/* Only a worker in a user namespace of its own has a count of its own
 * (SECURITY.md, "Resource limits"); elsewhere filling it would take the
 * count the other sessions share. 1 if @s has one. */
static int own_signal_count(ci_session *s, const char *test)
{
    if (ci_session_sandbox(s) & CI_SANDBOX_USERNS)
        return 1;
    assert_int_equal(h_probe(h_zygote_default())->layers & CI_SANDBOX_USERNS, 0);
    h_skip_because_(test, "no user namespace here (the kernel's report agrees): the count of "
                    "queued signals is shared by every worker of one uid");
    return 0;
}

/* A cell that sleeps @s, interrupted after 300 ms: KeyboardInterrupt,
 * well before the grace period would have killed it. */
static void assert_interrupt_works(ci_session *s)
{
    struct h_interrupter in;
    int64_t t0 = h_now_ms();

    h_interrupt_later(&in, s, 300);
    ci_result *r = h_run_status(s, "import time\ntime.sleep(30)", CI_STATUS_INTERRUPTED);
    assert_int_equal(h_interrupter_join(&in), 1);
    h_assert_str(ci_result_error_name(r), "KeyboardInterrupt");
    ci_result_free(r);
    if (h_now_ms() - t0 > 20000)
        fail_msg("the interrupt took %lld ms", (long long)(h_now_ms() - t0));
}

static void test_a_full_signal_queue_spares_other_sessions_and_the_host(void **state)
{
    if (!own_signal_count(S, __func__))
        return;
    /* The cell signals_fill_the_queue fills the worker's queue of
     * signals: real-time signals, blocked, sent to itself until the kernel
     * queues no more (RLIMIT_SIGPENDING); the count stays full while they
     * wait. */
    a_cell = h_cell_then("signals_fill_the_queue", "queued()");
    a_expect_value(S, a_cell, "'64/64'", "its queue is not its own");
    /* The other session can still queue a signal (tgkill: a real-time
     * one fails with EAGAIN when a count it is charged to is full), and
     * so can the host for it: its interrupt. */
    char *next = h_cell("signals_another_session_queues_a_signal");
    free(a_cell);
    a_cell = next;
    a_expect_value(B, a_cell, "'1/64'", "another session's queue filled this one's");
    assert_interrupt_works(B);
    /* The host can still queue a signal to itself. */
    sigset_t rt;
    siginfo_t info;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &rt, NULL), 0);
    assert_int_equal(sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = 7}), 0);
    assert_int_equal(sigwaitinfo(&rt, &info), SIGRTMIN);
    assert_int_equal(info.si_value.sival_int, 7);
    assert_int_equal(pthread_sigmask(SIG_UNBLOCK, &rt, NULL), 0);
    /* Its own interrupt comes without its number, and still stops it. */
    assert_interrupt_works(S);
    assert_int_equal(ci_session_restart(S), CI_OK);
    assert_everyone_alive();
}

/* Interrupts the session (the payload) once the cell says its queue is
 * full. */
static void interrupt_when_full(int stream, const char *data, size_t len, void *payload)
{
    /* Its line may come in two pieces, "full" and "\n". */
    if (stream == CI_STREAM_STDOUT && memmem(data, len, "full", 4))
        ci_session_interrupt(payload);
}

/* The cell blocks SIGINT and fills its queue, so the host's interrupt
 * waits, without its number, as the cell ends: it must not land in the
 * next cell, which unblocks SIGINT. */
static void test_an_interrupt_without_its_number_never_hits_a_later_cell(void **state)
{
    ci_result *r = NULL;

    if (!own_signal_count(S, __func__))
        return;
    char *cell = h_cells("signals_fill_the_queue", "signals_full_with_sigint_blocked");
    a_cell = h_fmt("import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n%s",
                   cell);
    free(cell);
    assert_int_equal(ci_run_stream(S, a_cell, interrupt_when_full, S, &r), CI_OK);
    /* Interrupted as far as the host knows, though the cell went on. */
    if (ci_result_status(r) != CI_STATUS_INTERRUPTED) {
        h_dump(r);
        fail_msg("the run was not interrupted");
    }
    h_assert_str(ci_result_stdout(r, NULL), "full\n64/64 True\n");
    ci_result_free(r);
    h_expect_cell(S, "signals_sigint_unblocked_later", "'not interrupted'", "");
    assert_int_equal(ci_session_restart(S), CI_OK);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    /* As an unprivileged host too: its workers' queued signals are also
     * counted against its own uid. */
    int other = a_also_unprivileged(argv);
    const struct CMUnitTest tests[] = {
        A_TEST(test_sigkill_to_the_host),
        A_TEST(test_sigkill_to_its_parent_as_it_sees_it),
        A_TEST(test_sigterm_to_the_host),
        A_TEST(test_sigkill_to_every_process),
        A_TEST(test_killpg_of_its_own_group),
        A_TEST(test_killpg_of_the_hosts_group),
        A_TEST(test_sigterm_to_init),
        A_TEST(test_sigkill_to_the_sentinel),
        A_TEST(test_sigkill_to_another_sessions_worker),
        A_TEST(test_tgkill_of_the_hosts_main_thread),
        A_TEST(test_rt_sigqueueinfo_to_the_host),
        A_TEST(test_pidfd_send_signal_to_the_host),
        A_TEST(test_sigio_to_the_host_through_f_setown),
        A_TEST(test_a_full_signal_queue_spares_other_sessions_and_the_host),
        A_TEST(test_an_interrupt_without_its_number_never_hits_a_later_cell),
    };
    char *name = h_fmt("attacks: signals (%s)", a_host_kind());
    int rc = cmocka_run_group_tests_name(name, tests, group_setup, group_teardown);
    free(name);
    return rc || other;
}
