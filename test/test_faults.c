/*
 * Fault injection: the worker is killed (SIGKILL from the host side, at
 * random points of a run), stopped (SIGSTOP), or misbehaves on its
 * channel in ways test_protocol.c does not cover. In every case ci_run()
 * must come back within the run's deadline with a clear status, the
 * session must be dead (not half alive) and ci_session_restart() must give
 * a working session; files in the workspace outlive the worker.
 *
 * The random delays come from one seed, printed at the start; set
 * FAULTS_SEED to replay a run and FAULTS_ROUNDS (default 2) for more
 * rounds of the kill points.
 *
 * Like test_protocol.c, this program is also its own fake worker: started
 * as codeinterp-worker (argv[1] == "--parent", through $CODEINTERP_WORKER)
 * it answers each cell as its source says.
 *
 * While one test runs, the test process is a child subreaper (prctl(2)),
 * so the process the fake worker leaves behind becomes its child; the
 * last test checks that no child and no zombie is left.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_worker.h"
#include "helpers.h"
#include "proto.h"
#include "proto.h" /* ci_zygote_stop_all */
#include "zygote.h"

/* The real worker's session. The deadline a run must meet is timeout +
 * grace (+100 ms promised by ci_run); the margin only catches hangs. */
#define TIMEOUT_MS 5000
#define GRACE_MS 500
#define MARGIN_MS 1500
/* A killed worker must be noticed this soon after the kill (a generous
 * bound: it is seen through its pidfd and its channel at once). */
#define NOTICE_MS 1500

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

/* A delay in [lo, hi] milliseconds. */
static int rnd_ms(int lo, int hi)
{
    return lo + (int)(rnd() % (uint64_t)(hi - lo + 1));
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ------------------------------------------------------ the killer */

/* A thread that sends @sig to @pid after @delay_ms, and optionally
 * SIGCONT @cont_ms later. It records when it fired; cmocka's asserts stay
 * on the main thread. */
struct killer {
    pthread_t thread;
    pid_t pid;
    int sig;
    int delay_ms;
    int cont_ms; /* 0: no SIGCONT */
    int64_t fired_ms;
    int kill_rc, kill_errno;
};

static void *killer_main(void *arg)
{
    struct killer *k = arg;
    sleep_ms(k->delay_ms);
    k->fired_ms = h_now_ms();
    k->kill_rc = kill(k->pid, k->sig);
    k->kill_errno = errno;
    if (k->cont_ms) {
        sleep_ms(k->cont_ms);
        kill(k->pid, SIGCONT);
    }
    return NULL;
}

static void killer_start(struct killer *k, pid_t pid, int sig, int delay_ms, int cont_ms)
{
    k->cont_ms = cont_ms;
    k->pid = pid;
    k->sig = sig;
    k->delay_ms = delay_ms;
    k->fired_ms = 0;
    k->kill_rc = -1;
    assert_int_equal(pthread_create(&k->thread, NULL, killer_main, k), 0);
}

static void killer_join(struct killer *k)
{
    assert_int_equal(pthread_join(k->thread, NULL), 0);
    if (k->kill_rc != 0)
        fail_msg("kill(%d, %d) failed: %s", (int)k->pid, k->sig, strerror(k->kill_errno));
}

/* ------------------------------------------------- shared assertions */

/* Waits up to 2 s for @pid to be a zombie or gone: dead, whether or not
 * the library has reaped it yet. */
static void wait_dead(int pid)
{
    char st;
    int ppid, sid;
    for (int i = 0; i < 200; i++) {
        if (!h_proc_stat(pid, &st, &ppid, &sid) || st == 'Z')
            return;
        sleep_ms(10);
    }
    fail_msg("process %d is still alive (state %c) 2 s after SIGKILL", pid, st);
}

/* @r is a run whose worker was SIGKILLed from outside: KILLED, WorkerDied,
 * the signal named, no value, no files listed. */
static void assert_killed_by_sigkill(const ci_result *r, const char *what)
{
    const char *v = ci_result_error_value(r);
    if (ci_result_status(r) != CI_STATUS_KILLED || !ci_result_error_name(r) ||
        strcmp(ci_result_error_name(r), "WorkerDied") != 0 || !v ||
        (!strstr(v, "SIGKILL") && !strstr(v, "signal 9"))) {
        h_dump(r);
        fail_msg("%s: expected KILLED, WorkerDied, by SIGKILL", what);
    }
    assert_null(ci_result_value(r));
    assert_int_equal(ci_result_file_count(r), 0);
    assert_int_equal(ci_result_truncated(r) & CI_TRUNCATED_FILES, 0);
    assert_int_equal(ci_result_cpu_time_us(r), 0);
}

/*
 * The worker was SIGKILLed while no cell ran (or after the last result).
 * The library learns of a death only when it reaps the worker, so the
 * next ci_run() is either refused (CI_EDEAD) or, as now, tries to hand
 * the cell over, finds the worker gone and reports it as the cell's fate:
 * CI_OK with KILLED, WorkerDied. Either way the session is then known to
 * be dead: pid -1 and CI_EDEAD. Returns 1 if the run reported it.
 */
static int expect_death_noticed_by_next_run(ci_session *s, const char *what)
{
    ci_result *r = NULL;
    int64_t t0 = h_now_ms();
    int rc = ci_run(s, "'never runs'", &r);
    int64_t took = h_now_ms() - t0;
    int reported = 0;
    if (took > NOTICE_MS)
        fail_msg("%s: ci_run on a dead worker took %lld ms", what, (long long)took);
    if (rc == CI_OK) {
        assert_non_null(r);
        assert_killed_by_sigkill(r, what);
        ci_result_free(r);
        reported = 1;
    } else if (rc == CI_EDEAD) {
        assert_null(r);
    } else {
        fail_msg("%s: ci_run on a dead worker: %d (%s)", what, rc, ci_strerror(rc));
    }
    assert_int_equal(ci_session_pid(s), -1);
    assert_int_equal(ci_session_sandbox(s), 0);
    r = (ci_result *)&r;
    assert_int_equal(ci_run(s, "1", &r), CI_EDEAD);
    assert_null(r);
    return reported;
}

/* After a death: the session is dead, the old worker reaped (not a
 * zombie), and a restart gives a fresh interpreter that runs cells. */
static void assert_dead_then_restarts(ci_session *s, int old_pid)
{
    ci_result *r = (ci_result *)&r;
    char st;
    int ppid, sid;
    assert_int_equal(ci_session_pid(s), -1);
    assert_true(strlen(ci_session_errmsg(s)) > 0);
    assert_int_equal(ci_run(s, "1", &r), CI_EDEAD);
    assert_null(r);
    /* Reaped by the library (a worker slow to die, by its reaper): no
     * zombie of ours is left under that pid. */
    if (!h_wait_reaped(old_pid, 5000) && h_proc_stat(old_pid, &st, &ppid, &sid))
        fail_msg("worker %d is still our child (state %c) 5 s after its death was reported",
                 old_pid, st);

    int64_t t0 = h_now_ms();
    int rc = ci_session_restart(s);
    if (rc != CI_OK)
        fail_msg("ci_session_restart: %d (%s): %s", rc, ci_strerror(rc), ci_session_errmsg(s));
    assert_true(h_now_ms() - t0 < 30000);
    assert_true(ci_session_pid(s) > 0);
    assert_int_not_equal(ci_session_pid(s), old_pid);
    r = h_run_status(s, "x = 6 * 7\nx", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "42");
    assert_int_equal(ci_result_execution_count(r), 1);
    ci_result_free(r);
}

/* ------------------------------------------- SIGKILL at random points */

/* Where in a run the worker is killed. @code runs (NULL: none, the worker
 * is killed idle), the kill comes @lo..@hi ms after ci_run starts. Every
 * cell but "after the end" would run past the kill: it loops, or its
 * work takes several times @hi (measured on 2 cores). */
struct kill_point {
    const char *name;
    const char *code;
    int lo, hi;
    int may_finish; /* the kill may come after the result */
};

static const struct kill_point points[] = {
    {"idle", NULL, 0, 0, 0},
    {"printing a flood",
     "import sys\nwhile True:\n    sys.stdout.write('x' * 4095 + '\\n')", 0, 800, 0},
    {"sleeping", "import time\ntime.sleep(60)", 0, 800, 0},
    {"writing a big file",
     "chunk = b'\\xab' * (1 << 20)\n"
     "with open('big.bin', 'wb') as f:\n"
     "    while True:\n"
     "        f.seek(0)\n"
     "        for i in range(64):\n"
     "            f.write(chunk)\n"
     "        f.flush()",
     0, 800, 0},
    {"rendering with savefig",
     "import matplotlib.pyplot as plt, numpy as np\n"
     "while True:\n"
     "    fig = plt.figure()\n"
     "    plt.plot(np.random.rand(5000))\n"
     "    fig.savefig('fig.png')\n"
     "    plt.close(fig)",
     50, 800, 0},
    /* Twenty open figures are rendered after the cell's code, by the
     * worker, as its outputs (about 2.8 s here). */
    {"rendering the cell's figures",
     "import matplotlib.pyplot as plt, numpy as np\n"
     "for i in range(20):\n"
     "    plt.figure()\n"
     "    plt.plot(np.random.rand(5000))",
     100, 600, 0},
    {"right after the run ends", "import time\ntime.sleep(0.2)\n'done'", 150, 350, 1},
};

static ci_session *S; /* the real worker's session */

static int real_setup(void **state)
{
    struct h_limits lim = {.timeout_ms = TIMEOUT_MS, .grace_ms = GRACE_MS, .output = 65536};
    unsetenv("CODEINTERP_WORKER");
    return h_group_session(&S, &lim);
}

static int rounds(void)
{
    const char *e = getenv("FAULTS_ROUNDS");
    int n = e ? atoi(e) : 2;
    return n > 0 ? n : 2;
}

static void kill_at(const struct kill_point *p, int round)
{
    struct killer k;
    char what[160];
    int pid = ci_session_pid(S);
    assert_true(pid > 0);

    if (!p->code) {
        /* Idle: between two runs. */
        h_expect(S, "'warm'", "'warm'", "");
        killer_start(&k, pid, SIGKILL, 0, 0);
        killer_join(&k);
        wait_dead(pid);
        snprintf(what, sizeof what, "round %d, killed %s", round, p->name);
        int reported = expect_death_noticed_by_next_run(S, what);
        fprintf(stderr, "  %-30s: next run %s\n", p->name,
                reported ? "reported KILLED WorkerDied" : "refused with CI_EDEAD");
        assert_dead_then_restarts(S, pid);
        return;
    }

    int delay = rnd_ms(p->lo, p->hi);
    ci_result *r = NULL;
    snprintf(what, sizeof what, "round %d, killed %s at %d ms", round, p->name, delay);
    int64_t t0 = h_now_ms();
    killer_start(&k, pid, SIGKILL, delay, 0);
    int rc = ci_run(S, p->code, &r);
    int64_t took = h_now_ms() - t0;
    killer_join(&k);
    if (rc != CI_OK)
        fail_msg("%s: ci_run: %d (%s): %s", what, rc, ci_strerror(rc), ci_session_errmsg(S));
    assert_non_null(r);
    if (took > TIMEOUT_MS + GRACE_MS + MARGIN_MS)
        fail_msg("%s: ci_run took %lld ms, past the deadline", what, (long long)took);

    if (ci_result_status(r) == CI_STATUS_KILLED) {
        assert_killed_by_sigkill(r, what);
        /* Seen soon after the kill, not at the timeout. */
        int64_t after_kill = t0 + took - k.fired_ms;
        if (after_kill > NOTICE_MS)
            fail_msg("%s: ci_run returned %lld ms after the kill", what, (long long)after_kill);
        fprintf(stderr, "  %-30s: kill at %4d ms, KILLED after %5lld ms (%lld ms after the kill)\n",
                p->name, delay, (long long)took, (long long)after_kill);
        ci_result_free(r);
    } else if (p->may_finish && ci_result_status(r) == CI_STATUS_OK) {
        /* The kill came after the result: the cell's value is whole and
         * the death shows at the next run. */
        h_assert_str(ci_result_value(r), "'done'");
        ci_result_free(r);
        wait_dead(pid);
        int reported = expect_death_noticed_by_next_run(S, what);
        fprintf(stderr, "  %-30s: kill at %4d ms, the run had ended OK; next run %s\n", p->name,
                delay, reported ? "reported KILLED WorkerDied" : "refused with CI_EDEAD");
    } else {
        h_dump(r);
        fail_msg("%s: status %s", what, h_status_name(ci_result_status(r)));
    }
    assert_dead_then_restarts(S, pid);
}

static void test_sigkill_at_random_points_of_a_run(void **state)
{
    int n = rounds();
    for (int round = 1; round <= n; round++)
        for (size_t i = 0; i < sizeof points / sizeof *points; i++)
            kill_at(&points[i], round);
    /* The file the killed writer left is still in the workspace. */
    h_expect(S, "import os\nos.path.getsize('big.bin') > 0", "True", "");
}

/* ------------------------------------------- SIGKILL during a restart */

/* Finds the worker a restart is starting (our child other than @old_pid;
 * the test has no other children then), waits @delay_ms, kills it. */
struct start_killer {
    pthread_t thread;
    int old_pid, delay_ms;
    int pid;        /* the worker found, or 0 */
    int killed;
};

static int find_new_child(int old_pid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int found = 0;
    if (!d)
        return 0;
    while (!found && (e = readdir(d))) {
        char st;
        int ppid, sid, pid = atoi(e->d_name);
        if (pid > 0 && pid != old_pid && h_proc_stat(pid, &st, &ppid, &sid) &&
            ppid == getpid() && st != 'Z' && !h_is_zygote(pid))
            found = pid;
    }
    closedir(d);
    return found;
}

static void *start_killer_main(void *arg)
{
    struct start_killer *k = arg;
    for (int64_t end = h_now_ms() + 10000; !k->pid && h_now_ms() < end;)
        if (!(k->pid = find_new_child(k->old_pid)))
            usleep(500);
    if (!k->pid)
        return NULL;
    sleep_ms(k->delay_ms);
    k->killed = kill(k->pid, SIGKILL) == 0;
    return NULL;
}

static void test_sigkill_during_restart_fails_cleanly_and_restart_works(void **state)
{
    /* A zygote's child is ready in milliseconds, a worker started by exec
     * in most of a second: short delays catch the one, long the other. */
    static const int max_delay_ms[] = {2, 8, 700, 700};
    for (int i = 0; i < 4; i++) {
        struct start_killer k = {.old_pid = ci_session_pid(S),
                                 .delay_ms = rnd_ms(0, max_delay_ms[i])};
        assert_int_equal(pthread_create(&k.thread, NULL, start_killer_main, &k), 0);
        int64_t t0 = h_now_ms();
        int rc = ci_session_restart(S);
        int64_t took = h_now_ms() - t0;
        assert_int_equal(pthread_join(k.thread, NULL), 0);
        assert_true(k.pid > 0);
        assert_true(k.killed);
        assert_true(took < 15000);
        if (rc == CI_ESPAWN) {
            /* Killed before READY: the start failed, and says why. */
            h_assert_contains(ci_session_errmsg(S), "did not start");
            h_assert_contains(ci_session_errmsg(S), "SIGKILL");
            assert_int_equal(ci_session_pid(S), -1);
            fprintf(stderr, "  killed %3d ms into the start: CI_ESPAWN after %lld ms: %s\n",
                    k.delay_ms, (long long)took, ci_session_errmsg(S));
        } else if (rc == CI_OK) {
            /* Killed after READY: the next run finds it dead. */
            wait_dead(k.pid);
            expect_death_noticed_by_next_run(S, "killed after the restart's READY");
            fprintf(stderr, "  killed %3d ms into the start: it had started (%lld ms)\n",
                    k.delay_ms, (long long)took);
        } else {
            fail_msg("ci_session_restart with the new worker killed: %d (%s): %s", rc,
                     ci_strerror(rc), ci_session_errmsg(S));
        }
        assert_dead_then_restarts(S, k.pid);
    }
}

/* ------------------------------------------ file transfer and a kill */

#define BIG_LEN (50u * 1024 * 1024)

/* A pseudo-random pattern that depends on @salt. */
static unsigned char *pattern(unsigned salt)
{
    unsigned char *p = malloc(BIG_LEN);
    assert_non_null(p);
    uint64_t x = 0x9E3779B97F4A7C15ULL ^ salt;
    for (size_t i = 0; i < BIG_LEN; i += 8) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t v = x * 2685821657736338717ULL;
        memcpy(p + i, &v, 8);
    }
    return p;
}

/* Two checksums a cell can compute quickly with numpy: the sum of the
 * bytes, and the sum of byte * (index mod 65521). */
static void checksums(const unsigned char *p, size_t n, uint64_t *s1, uint64_t *s2)
{
    *s1 = *s2 = 0;
    for (size_t i = 0; i < n; i++) {
        *s1 += p[i];
        *s2 += (uint64_t)p[i] * (i % 65521);
    }
}

static const char checksum_cell[] =
    "import numpy as np\n"
    "def sums(name):\n"
    "    data = open(name, 'rb').read()\n"
    "    s1 = s2 = 0\n"
    "    for at in range(0, len(data), 1 << 20):\n"
    "        b = np.frombuffer(data, np.uint8, count=min(1 << 20, len(data) - at), offset=at)\n"
    "        b = b.astype(np.uint64)\n"
    "        i = np.arange(at, at + len(b), dtype=np.uint64) % 65521\n"
    "        s1 += int(b.sum())\n"
    "        s2 += int((b * i).sum())\n"
    "    return len(data), s1, s2\n";

static void assert_round_trip(ci_session *s, const char *name, const unsigned char *want)
{
    void *data = NULL;
    size_t len = 0;
    int rc = ci_session_get_file(s, name, &data, &len);
    if (rc != CI_OK)
        fail_msg("get_file %s: %d (%s): %s", name, rc, ci_strerror(rc), ci_session_errmsg(s));
    assert_int_equal(len, BIG_LEN);
    if (memcmp(data, want, BIG_LEN) != 0)
        fail_msg("get_file %s: the content differs from what was put", name);
    assert_int_equal(((unsigned char *)data)[len], 0);
    ci_free(data);
}

static void test_transfers_survive_a_worker_killed_meanwhile(void **state)
{
    unsigned char *a = pattern(1), *b = pattern(2), *c = pattern(3);
    struct killer k;
    int pid = ci_session_pid(S);
    int64_t t0, put_end, get_end;
    int rc;

    /* Killed while put_file writes 50 MB, then read back. */
    int delay = rnd_ms(0, 40);
    t0 = h_now_ms();
    killer_start(&k, pid, SIGKILL, delay, 0);
    rc = ci_session_put_file(S, "a.bin", a, BIG_LEN);
    put_end = h_now_ms();
    if (rc != CI_OK)
        fail_msg("put_file while the worker was killed: %d (%s): %s", rc, ci_strerror(rc),
                 ci_session_errmsg(S));
    assert_round_trip(S, "a.bin", a);
    get_end = h_now_ms();
    killer_join(&k);
    fprintf(stderr, "  kill at %d ms; put_file took %lld ms, get_file %lld ms\n", delay,
            (long long)(put_end - t0), (long long)(get_end - put_end));
    wait_dead(pid);
    expect_death_noticed_by_next_run(S, "killed during put_file");

    /* On the dead session (pid -1): a second file both ways. */
    assert_int_equal(ci_session_pid(S), -1);
    assert_int_equal(ci_session_put_file(S, "b.bin", b, BIG_LEN), CI_OK);
    assert_round_trip(S, "b.bin", b);
    assert_round_trip(S, "a.bin", a);

    /* The new worker sees both files whole. */
    assert_dead_then_restarts(S, pid);
    uint64_t s1, s2;
    char *want;
    h_expect(S, checksum_cell, NULL, "");
    checksums(a, BIG_LEN, &s1, &s2);
    want = h_fmt("(%u, %" PRIu64 ", %" PRIu64 ")", BIG_LEN, s1, s2);
    h_expect(S, "sums('a.bin')", want, "");
    free(want);
    checksums(b, BIG_LEN, &s1, &s2);
    want = h_fmt("(%u, %" PRIu64 ", %" PRIu64 ")", BIG_LEN, s1, s2);
    h_expect(S, "sums('b.bin')", want, "");
    free(want);

    /* Killed while get_file reads a file the cell wrote. */
    h_expect(S, "import shutil\nshutil.copyfile('b.bin', 'c.bin');", NULL, "");
    pid = ci_session_pid(S);
    delay = rnd_ms(0, 30);
    killer_start(&k, pid, SIGKILL, delay, 0);
    assert_round_trip(S, "c.bin", b);
    /* and put_file over it while it dies */
    assert_int_equal(ci_session_put_file(S, "c.bin", c, BIG_LEN), CI_OK);
    killer_join(&k);
    assert_round_trip(S, "c.bin", c);
    wait_dead(pid);
    expect_death_noticed_by_next_run(S, "killed during get_file");
    assert_dead_then_restarts(S, pid);
    checksums(c, BIG_LEN, &s1, &s2);
    want = h_fmt("(%u, %" PRIu64 ", %" PRIu64 ")", BIG_LEN, s1, s2);
    h_expect(S, checksum_cell, NULL, "");
    h_expect(S, "sums('c.bin')", want, "");
    free(want);
    h_expect(S, "import os\nfor f in ('a.bin', 'b.bin', 'c.bin'):\n    os.remove(f)", NULL, "");
    free(a);
    free(b);
    free(c);
}

/* ------------------------------------------------------------ SIGSTOP */

/* A stopped worker never answers: the run ends at its hard deadline,
 * timeout + grace, with the worker killed (SIGKILL ends a stopped
 * process too). */
static void expect_stopped_run_killed(ci_session *s, const char *code, unsigned long timeout_ms,
                                      int stop_delay)
{
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    struct killer k;
    ci_result *r = NULL;
    int pid = ci_session_pid(s);
    opts.timeout_ms = timeout_ms;

    int64_t t0 = h_now_ms();
    killer_start(&k, pid, SIGSTOP, stop_delay, 0);
    assert_int_equal(ci_run_ex(s, code, &opts, &r), CI_OK);
    int64_t took = h_now_ms() - t0;
    killer_join(&k);
    fprintf(stderr, "  stopped mid-run: KILLED after %lld ms (timeout %lu + grace %d)\n",
            (long long)took, timeout_ms, GRACE_MS);
    if (ci_result_status(r) != CI_STATUS_KILLED) {
        h_dump(r);
        fail_msg("a stopped worker's run: status %s", h_status_name(ci_result_status(r)));
    }
    h_assert_str(ci_result_error_name(r), "TimeoutError");
    h_assert_contains(ci_result_error_value(r), "was killed");
    assert_null(ci_result_value(r));
    ci_result_free(r);
    /* Not before the hard deadline (the worker got its grace), and not
     * long after it. */
    assert_true(took >= (int64_t)timeout_ms + GRACE_MS - 20);
    assert_true(took <= (int64_t)timeout_ms + GRACE_MS + MARGIN_MS);
    assert_dead_then_restarts(s, pid);
}

static void test_sigstop_mid_run_is_killed_at_the_hard_deadline(void **state)
{
    expect_stopped_run_killed(S, "import time\ntime.sleep(60)", 1000, rnd_ms(50, 500));
}

/* Between cells the worker is stopped anyway (lib/cpu.c): the next run
 * continues it, whoever stopped it. */
static void test_sigstop_while_idle_is_continued_by_the_next_run(void **state)
{
    int pid = ci_session_pid(S);
    char st = 0;
    int ppid, sid;
    assert_int_equal(kill(pid, SIGSTOP), 0);
    for (int i = 0; i < 100 && h_proc_stat(pid, &st, &ppid, &sid) && st != 'T'; i++)
        sleep_ms(10);
    assert_int_equal(st, 'T');
    h_expect(S, "'continued'", "'continued'", "");
    assert_int_equal(ci_session_pid(S), pid);
}

/* Stopped and continued within the timeout: only slower. */
static void test_sigstop_then_sigcont_within_the_timeout_is_only_slower(void **state)
{
    struct killer k;
    int pid = ci_session_pid(S);
    int64_t t0 = h_now_ms();
    killer_start(&k, pid, SIGSTOP, 50, 400);
    ci_result *r = h_run_status(S, "import time\ntime.sleep(0.2)\n'resumed'", CI_STATUS_OK);
    int64_t took = h_now_ms() - t0;
    killer_join(&k);
    h_assert_str(ci_result_value(r), "'resumed'");
    ci_result_free(r);
    assert_true(took >= 400);
    assert_int_equal(ci_session_pid(S), pid);
    h_expect(S, "'still here'", "'still here'", "");
}

/* RESULT: OK, the echoed count, value "42". */
static void answer_ok(uint32_t count)
{
    unsigned char buf[64];
    uint32_t ok = CI_OUTCOME_OK;
    size_t n = fw_field(buf, 0, CI_FIELD_COUNT, &count, 4);
    n = fw_field(buf, n, CI_FIELD_OUTCOME, &ok, 4);
    n = fw_field(buf, n, CI_FIELD_VALUE, "42", 2);
    fw_frame(CI_FRAME_RESULT, buf, (uint32_t)n);
}

static int fake_worker(void)
{
    static unsigned char buf[1 << 16];
    char code[256];
    struct ci_frame_header h;
    uint32_t ready[3] = {CI_PROTO_VERSION, CI_LAYER_ALL, CI_READY_NO_LISTENER};
    uint32_t count;

    signal(SIGINT, SIG_IGN); /* a worker that ignores interrupts */
    fw_frame(CI_FRAME_READY, ready, sizeof ready);
    for (;;) {
        fw_get_run(&count, NULL, code, sizeof code);

        if (!strcmp(code, "good")) {
            answer_ok(count);
        } else if (!strcmp(code, "good-then-stop-reading")) {
            /* Answers, then never reads its channel again: the host's
             * next send fills the socket and must give up at the
             * deadline. */
            answer_ok(count);
            for (;;)
                pause();
        } else if (!strcmp(code, "good-then-close-channel")) {
            /* Answers, then closes its channel and lives on. */
            answer_ok(count);
            close(CI_FD_CHANNEL);
            for (;;)
                pause();
        } else if (!strcmp(code, "half-header-then-stall")) {
            fw_put(&(struct ci_frame_header){CI_FRAME_RESULT, 100}, 4);
            for (;;)
                pause();
        } else if (!strcmp(code, "drip")) {
            /* A whole frame, one byte every 20 ms: 4 s, past the
             * deadline, though bytes keep coming. */
            unsigned char res[200];
            memset(res, 0, sizeof res);
            fw_put(&(struct ci_frame_header){CI_FRAME_RESULT, sizeof res}, sizeof h);
            for (size_t i = 0; i < sizeof res; i++) {
                fw_put(res + i, 1);
                usleep(20000);
            }
            for (;;)
                pause();
        } else if (!strcmp(code, "truncated-then-exit")) {
            fw_put(&(struct ci_frame_header){CI_FRAME_RESULT, 100}, sizeof h);
            fw_put("abc", 3);
            _exit(0);
        } else if (!strcmp(code, "orphan-keeps-pipes-then-exit")) {
            /* A child that outlives the worker holds its stdout, stderr
             * and channel open and floods stdout: the host must still see
             * the worker's own exit. */
            pid_t child = fork();
            if (child == 0) {
                FILE *f = fopen("orphan.pid", "w");
                if (f) {
                    fprintf(f, "%d\n", (int)getpid());
                    fclose(f);
                }
                signal(SIGPIPE, SIG_DFL);
                memset(buf, 'o', sizeof buf);
                for (int64_t end = h_now_ms() + 20000; h_now_ms() < end;)
                    if (write(1, buf, sizeof buf) < 0)
                        _exit(0);
                _exit(0);
            }
            usleep(100000);
            _exit(3);
        } else {
            _exit(95);
        }
    }
}

static char self_path[PATH_MAX];

static int fake_setup(void **state)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0)
        return -1;
    self_path[n] = '\0';
    return setenv("CODEINTERP_WORKER", self_path, 1);
}

static int fake_teardown(void **state)
{
    return unsetenv("CODEINTERP_WORKER");
}

#define F_TIMEOUT 800
#define F_GRACE 300
static const struct h_limits fast = {.timeout_ms = F_TIMEOUT, .grace_ms = F_GRACE, .output = 4096};

/* Runs @code on @s; asserts KILLED with @name (and @why in the value,
 * unless NULL) within the deadline, then that the session is dead and
 * restarts into a working one. */
static void expect_fake_killed(ci_session *s, const char *code, const char *name, const char *why)
{
    ci_result *r = NULL;
    int pid = ci_session_pid(s);
    int64_t t0 = h_now_ms();
    assert_int_equal(ci_run(s, code, &r), CI_OK);
    int64_t took = h_now_ms() - t0;
    fprintf(stderr, "  %.40s: %s after %lld ms\n", code, ci_result_error_name(r), (long long)took);
    if (took > F_TIMEOUT + F_GRACE + 1000)
        fail_msg("%.40s: ci_run took %lld ms, past the deadline", code, (long long)took);
    if (ci_result_status(r) != CI_STATUS_KILLED || !ci_result_error_name(r) ||
        strcmp(ci_result_error_name(r), name) != 0) {
        h_dump(r);
        fail_msg("%.40s: expected KILLED, %s", code, name);
    }
    if (why)
        h_assert_contains(ci_result_error_value(r), why);
    assert_null(ci_result_value(r));
    ci_result_free(r);
    assert_int_equal(ci_session_pid(s), -1);
    assert_int_equal(ci_session_restart(s), CI_OK);
    assert_int_not_equal(ci_session_pid(s), pid);
    h_expect(s, "good", "42", "");
}

static void test_worker_that_stops_reading_gets_no_cell_past_the_deadline(void **state)
{
    ci_session *s = h_session(&fast);
    h_expect(s, "good-then-stop-reading", "42", "");
    /* 8 MiB: far more than the socket holds. (Its first bytes may reach
     * the fake; it never reads them.) */
    size_t len = 8u << 20;
    char *big = malloc(len + 1);
    assert_non_null(big);
    memset(big, '#', len);
    big[len] = '\0';
    expect_fake_killed(s, big, "TimeoutError", "could not be sent");
    free(big);
    ci_session_free(s);
}

static void test_worker_that_closes_its_channel_between_runs_is_dead(void **state)
{
    ci_session *s = h_session(&fast);
    h_expect(s, "good-then-close-channel", "42", "");
    expect_fake_killed(s, "good", "WorkerDied", NULL);
    ci_session_free(s);
}

static void test_stall_inside_a_frame_header_is_killed_at_the_deadline(void **state)
{
    ci_session *s = h_session(&fast);
    expect_fake_killed(s, "half-header-then-stall", "TimeoutError", "did not stop within 300 ms");
    ci_session_free(s);
}

static void test_dripping_frame_is_killed_at_the_deadline(void **state)
{
    ci_session *s = h_session(&fast);
    expect_fake_killed(s, "drip", "TimeoutError", "did not stop within 300 ms");
    ci_session_free(s);
}

static void test_truncated_frame_then_exit_is_worker_died(void **state)
{
    ci_session *s = h_session(&fast);
    expect_fake_killed(s, "truncated-then-exit", "WorkerDied", "exited with status 0");
    ci_session_free(s);
}

static void test_orphan_holding_the_pipes_does_not_hide_the_exit(void **state)
{
    /* The orphan becomes our child, so we can see it go and reap it. */
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    ci_session *s = h_session(&fast);
    char *pidfile = h_fmt("%s/orphan.pid", ci_session_workspace(s));
    ci_result *r = NULL;
    int64_t t0 = h_now_ms();
    assert_int_equal(ci_run(s, "orphan-keeps-pipes-then-exit", &r), CI_OK);
    int64_t took = h_now_ms() - t0;
    if (ci_result_status(r) != CI_STATUS_KILLED) {
        h_dump(r);
        fail_msg("expected KILLED");
    }
    h_assert_str(ci_result_error_name(r), "WorkerDied");
    h_assert_contains(ci_result_error_value(r), "exited with status 3");
    size_t len = 0;
    ci_result_stdout(r, &len);
    if (len > 4096)
        h_assert_cut(r, CI_STREAM_STDOUT, 4096);
    ci_result_free(r);
    assert_true(took <= F_TIMEOUT + F_GRACE + 1000);

    /* The orphan, now our child (we are a subreaper), dies of SIGPIPE or
     * a write error once the host has closed the pipes. */
    char *text = h_read_file(pidfile, NULL);
    assert_non_null(text);
    int orphan = atoi(text);
    free(text);
    assert_true(orphan > 0);
    int st = 0;
    pid_t got = 0;
    for (int i = 0; i < 300 && (got = waitpid(orphan, &st, WNOHANG)) == 0; i++)
        sleep_ms(10);
    if (got != orphan) {
        kill(orphan, SIGKILL);
        waitpid(orphan, NULL, 0);
        fail_msg("the orphan %d still wrote 3 s after the host closed its pipes", orphan);
    }
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "good", "42", "");
    free(pidfile);
    ci_session_free(s);
}

/* ------------------------------------------------- nothing left behind */


static void test_no_child_or_zombie_is_left(void **state)
{
    int zombies, n = 0;
    /* The zygotes live as long as the process, by design: stopping them
     * must leave nothing either. */
    ci_zygote_stop_all();
    /* Every session is freed by now. ci_session_free waits 50 ms for a
     * killed worker and leaves a slower one (a big address space takes
     * longer to tear down) to a reaper thread of the library: give that
     * thread 5 s. */
    for (int i = 0; i < 250 && (n = h_children(getpid(), &zombies, i == 0)) > 0; i++)
        sleep_ms(20);
    if (n > 0)
        h_children(getpid(), &zombies, 1);
    assert_int_equal(n, 0);
    assert_int_equal(zombies, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--parent"))
        return fake_worker();

    h_watchdog(200);
    const char *e = getenv("FAULTS_SEED");
    uint64_t seed = e ? strtoull(e, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    if (!seed)
        seed = 1;
    rng_state = seed;
    fprintf(stderr, "test_faults: seed %" PRIu64 " (FAULTS_SEED=%" PRIu64 " replays it)\n", seed,
            seed);

    const struct CMUnitTest real[] = {
        cmocka_unit_test_setup(test_sigkill_at_random_points_of_a_run, h_setup_alive),
        cmocka_unit_test_setup(test_sigkill_during_restart_fails_cleanly_and_restart_works,
                               h_setup_alive),
        cmocka_unit_test_setup(test_transfers_survive_a_worker_killed_meanwhile, h_setup_alive),
        cmocka_unit_test_setup(test_sigstop_mid_run_is_killed_at_the_hard_deadline,
                               h_setup_alive),
        cmocka_unit_test_setup(test_sigstop_while_idle_is_continued_by_the_next_run,
                               h_setup_alive),
        cmocka_unit_test_setup(test_sigstop_then_sigcont_within_the_timeout_is_only_slower,
                               h_setup_alive),
    };
    const struct CMUnitTest fake[] = {
        cmocka_unit_test(test_worker_that_stops_reading_gets_no_cell_past_the_deadline),
        cmocka_unit_test(test_worker_that_closes_its_channel_between_runs_is_dead),
        cmocka_unit_test(test_stall_inside_a_frame_header_is_killed_at_the_deadline),
        cmocka_unit_test(test_dripping_frame_is_killed_at_the_deadline),
        cmocka_unit_test(test_truncated_frame_then_exit_is_worker_died),
        cmocka_unit_test(test_orphan_holding_the_pipes_does_not_hide_the_exit),
    };
    const struct CMUnitTest last[] = {
        cmocka_unit_test(test_no_child_or_zombie_is_left),
    };
    int failed = cmocka_run_group_tests_name("faults: real worker", real, real_setup,
                                             h_group_teardown);
    failed += cmocka_run_group_tests_name("faults: fake worker", fake, fake_setup, fake_teardown);
    failed += cmocka_run_group_tests_name("faults: nothing left", last, NULL, NULL);
    return failed;
}
