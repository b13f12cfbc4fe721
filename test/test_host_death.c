/*
 * Host death: when the process that holds the sessions dies (SIGKILL, no
 * chance to clean up), every one of its workers must die too, at once:
 * each worker has a parent-death signal (prctl(2) PR_SET_PDEATHSIG,
 * SIGKILL) tied to the library's spawner thread, which lives as long as
 * the host process, and checks after setting it that its parent is still
 * the host. A worker left behind would keep running cells with nobody to
 * read them.
 *
 * The test forks a child "host" that starts sessions (one from a thread
 * that exits at once, one running a long cell on a thread of its own),
 * reports its workers' pids through a pipe, and is then SIGKILLed. The
 * test process is a child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so
 * the orphaned workers become its children: it can see how they ended
 * (by SIGKILL) and reap them, whatever PID 1 of the machine or container
 * does with zombies. A second case kills hosts in the middle of starting
 * a worker, at random moments (seed printed; HOST_DEATH_SEED replays).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "worker_start.h" /* ci_zygote_stop_all */
#include "zygote.h"

/* Every worker must be gone this soon after the host's death. */
#define GONE_MS 1000
/* Polling period of the process table. */
#define POLL_MS 20

#define NSESSIONS 3

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ------------------------------------------------------ the child host */

static int report_fd = -1;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 1)
        n = (int)sizeof line - 1;
    if (write(report_fd, line, (size_t)n) != n)
        _exit(90);
}

static void host_fail(const char *what, const char *detail)
{
    report("error %s: %s\n", what, detail);
    _exit(91);
}

static ci_config *host_config(const char *root)
{
    ci_config *cfg = ci_config_new();
    if (!cfg || ci_config_set_workspace_root(cfg, root) != CI_OK)
        host_fail("config", "ci_config_new or set_workspace_root failed");
    return cfg;
}

struct made {
    const char *root;
    ci_session *s;
    int rc;
    char err[256];
};

/* Makes a session and ends: the thread that asked for the worker is gone
 * long before the host dies, and the worker must not go with it. */
static void *make_session(void *arg)
{
    struct made *m = arg;
    ci_config *cfg = host_config(m->root);
    m->rc = ci_session_new(&m->s, cfg);
    if (m->rc != CI_OK)
        snprintf(m->err, sizeof m->err, "%s", ci_session_errmsg(NULL));
    ci_config_free(cfg);
    return NULL;
}

static void on_output(int stream, const char *data, size_t len, void *payload)
{
    int *seen = payload;
    if (!*seen && memmem(data, len, "running", 7)) {
        *seen = 1;
        report("running\n");
    }
}

static void *long_cell(void *arg)
{
    ci_session *s = arg;
    ci_result *r = NULL;
    int seen = 0;
    ci_run_stream(s, "import time\nprint('running', flush=True)\ntime.sleep(600)", on_output,
                  &seen, &r);
    /* Only a dead host ends this cell; reaching here is a failure. */
    report("error long cell: it ended\n");
    return NULL;
}

/* Scenario "sessions": three live sessions, one from an exited thread,
 * one running a cell; then waits to be killed. */
static void host_with_sessions(const char *root)
{
    struct made m[NSESSIONS];
    pthread_t t[NSESSIONS];
    for (int i = 0; i < NSESSIONS; i++) {
        m[i] = (struct made){.root = root};
        if (pthread_create(&t[i], NULL, make_session, &m[i]) != 0)
            host_fail("pthread_create", strerror(errno));
    }
    for (int i = 0; i < NSESSIONS; i++) {
        pthread_join(t[i], NULL);
        if (m[i].rc != CI_OK)
            host_fail("ci_session_new", m[i].err);
    }
    /* The threads that made them have exited: the workers still work. */
    sleep_ms(200);
    for (int i = 0; i < NSESSIONS; i++) {
        ci_result *r = NULL;
        if (ci_run(m[i].s, "6 * 7", &r) != CI_OK || ci_result_status(r) != CI_STATUS_OK ||
            !ci_result_value(r) || strcmp(ci_result_value(r), "42") != 0)
            host_fail("a cell after the creating thread exited", ci_session_errmsg(m[i].s));
        ci_result_free(r);
        report("pid %d\n", ci_session_pid(m[i].s));
    }
    pthread_t runner;
    if (pthread_create(&runner, NULL, long_cell, m[0].s) != 0)
        host_fail("pthread_create", strerror(errno));
    for (;;)
        pause();
}

/* Scenario "starting": starts and frees sessions in a loop, so that a
 * worker is always being started when the kill comes. */
static void host_starting_sessions(const char *root)
{
    ci_config *cfg = host_config(root);
    report("looping\n");
    for (;;) {
        ci_session *s = NULL;
        if (ci_session_new(&s, cfg) == CI_OK)
            report("pid %d\n", ci_session_pid(s));
        ci_session_free(s);
    }
}

/* ----------------------------------------------------------- the test */

struct host {
    pid_t pid;
    int fd; /* the read end of its report pipe */
    char *root;
};

static struct host start_host(void (*body)(const char *root))
{
    struct host h = {.root = h_tmpdir()};
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    h.pid = fork();
    assert_true(h.pid >= 0);
    if (h.pid == 0) {
        close(p[0]);
        report_fd = p[1];
        body(h.root);
        _exit(92);
    }
    close(p[1]);
    h.fd = p[0];
    return h;
}

/* Reads the host's report line by line until a line starts with @until,
 * collecting "pid N" lines into @pids; fails on an "error" line, EOF or
 * after @timeout_ms. Returns the number of pids. */
static int read_report(struct host *h, const char *until, int *pids, int max, int timeout_ms)
{
    static char buf[4096];
    static size_t have;
    int npids = 0;
    int64_t end = h_now_ms() + timeout_ms;
    have = 0;
    for (;;) {
        char *nl;
        while ((nl = memchr(buf, '\n', have))) {
            *nl = '\0';
            if (!strncmp(buf, "error", 5))
                fail_msg("the host failed: %s", buf);
            int pid;
            if (sscanf(buf, "pid %d", &pid) == 1 && npids < max)
                pids[npids++] = pid;
            int done = !strncmp(buf, until, strlen(until));
            size_t used = (size_t)(nl - buf) + 1;
            memmove(buf, nl + 1, have - used);
            have -= used;
            if (done)
                return npids;
        }
        int64_t left = end - h_now_ms();
        if (left <= 0)
            fail_msg("the host did not report \"%s\" within %d ms", until, timeout_ms);
        struct pollfd p = {.fd = h->fd, .events = POLLIN};
        poll(&p, 1, (int)left);
        ssize_t n = read(h->fd, buf + have, sizeof buf - 1 - have);
        if (n == 0)
            fail_msg("the host exited before reporting \"%s\"", until);
        if (n > 0)
            have += (size_t)n;
    }
}


/* How many session directories are under @root. */
static int session_dirs(const char *root)
{
    DIR *d = opendir(root);
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "codeinterp-", 11))
            n++;
    closedir(d);
    return n;
}

/* Session directories the host left under its root (it had no chance to
 * remove them); then removes the root. */
static int leftover_dirs(struct host *h)
{
    int n = session_dirs(h->root);
    h_rmtree(h->root);
    free(h->root);
    close(h->fd);
    return n;
}

/* SIGKILLs the host and reaps it; returns the time of the kill. */
static int64_t kill_host(struct host *h)
{
    int st = 0;
    int64_t t0 = h_now_ms();
    assert_int_equal(kill(h->pid, SIGKILL), 0);
    assert_int_equal(waitpid(h->pid, &st, 0), h->pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    return t0;
}

static void test_workers_die_with_their_host(void **state)
{
    int pids[NSESSIONS];
    struct host h = start_host(host_with_sessions);
    int n = read_report(&h, "running", pids, NSESSIONS, 60000);
    assert_int_equal(n, NSESSIONS);

    /* Alive, and the host's children (forked by its spawner thread). */
    for (int i = 0; i < n; i++) {
        char st;
        int ppid, sid;
        assert_true(pids[i] > 0);
        if (!h_proc_stat(pids[i], &st, &ppid, &sid))
            fail_msg("worker %d is not running before the host dies", pids[i]);
        assert_int_not_equal(st, 'Z');
        assert_int_equal(ppid, h.pid);
        /* Its own session (setsid), not the host's. */
        assert_int_equal(sid, pids[i]);
    }

    int64_t t0 = kill_host(&h);
    int64_t gone_at[NSESSIONS];
    int status[NSESSIONS], left = n;
    for (int i = 0; i < n; i++)
        gone_at[i] = -1, status[i] = -1;
    /* Poll every 20 ms; keep going past the bound (up to 10 s) only to
     * report how late a straggler is. */
    while (left > 0 && h_now_ms() - t0 < 10000) {
        for (int i = 0; i < n; i++) {
            if (gone_at[i] >= 0)
                continue;
            char st;
            int ppid, sid, ws = 0;
            pid_t got = waitpid(pids[i], &ws, WNOHANG);
            if (got == pids[i])
                status[i] = ws; /* orphaned to us, the subreaper */
            else if (h_proc_stat(pids[i], &st, &ppid, &sid))
                continue; /* still there: alive, or a zombie nobody reaped yet */
            gone_at[i] = h_now_ms() - t0;
            left--;
        }
        if (left > 0)
            sleep_ms(POLL_MS);
    }
    int64_t worst = 0;
    for (int i = 0; i < n; i++) {
        char how[64] = "";
        if (status[i] >= 0 && WIFSIGNALED(status[i]))
            snprintf(how, sizeof how, ", killed by signal %d", WTERMSIG(status[i]));
        else if (status[i] >= 0 && WIFEXITED(status[i]))
            snprintf(how, sizeof how, ", exited with status %d", WEXITSTATUS(status[i]));
        fprintf(stderr, "  worker %d%s: gone %lld ms after the host's SIGKILL%s\n", pids[i],
                i == 0 ? " (running a cell)" : "", (long long)gone_at[i], how);
        if (gone_at[i] < 0) {
            kill(pids[i], SIGKILL);
            fail_msg("worker %d outlived its host by 10 s", pids[i]);
        }
        if (gone_at[i] > worst)
            worst = gone_at[i];
    }
    fprintf(stderr, "  all %d workers gone within %lld ms (bound %d ms)\n", n, (long long)worst,
            GONE_MS);
    assert_true(worst <= GONE_MS);
    /* How they ended. The kernel closes the dead host's descriptors
     * before it sends the parent-death signal (do_exit: exit_files, then
     * exit_notify), so a worker may see its channel's EOF first: its
     * watchdog thread (a cell running or not) then exits with
     * CI_WORKER_EXIT_HOST_GONE. Either way it ended for one of those two
     * reasons and no other. */
    for (int i = 0; i < n; i++)
        if (status[i] >= 0 && !(WIFSIGNALED(status[i]) && WTERMSIG(status[i]) == SIGKILL) &&
            !(WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == CI_WORKER_EXIT_HOST_GONE))
            fail_msg("worker %d ended with wait status 0x%x: neither SIGKILL nor exit %d "
                     "at the channel's EOF",
                     pids[i], status[i], CI_WORKER_EXIT_HOST_GONE);
    /* The host's zygote, orphaned to us as well, dies by its parent-death
     * signal too: reap it (or anything else orphaned) within the bound. */
    for (int64_t end = h_now_ms() + GONE_MS; h_children(getpid(), NULL, 0) > 0 &&
                                             h_now_ms() < end;) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        sleep_ms(POLL_MS);
    }
    /* Nothing has the dead host as its parent, nothing is left with us. */
    assert_int_equal(h_children(h.pid, NULL, 1), 0);
    assert_int_equal(h_children(getpid(), NULL, 1), 0);
    /* A SIGKILLed host cannot remove its sessions' directories; the next
     * session started under the same root does, as their locks are free. */
    assert_int_equal(session_dirs(h.root), NSESSIONS);
    ci_session *s = h_session(&(struct h_limits){.root = h.root});
    assert_int_equal(session_dirs(h.root), 1);
    ci_session_free(s);
    assert_int_equal(leftover_dirs(&h), 0);
    /* That session's zygote is ours: the next test counts our children. */
    ci_zygote_stop_all();
}

static uint64_t rng_state;

static int rnd_ms(int lo, int hi)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return lo + (int)((rng_state * 2685821657736338717ULL) % (uint64_t)(hi - lo + 1));
}

/* Every child of ours (orphaned workers, once the host is reaped) is
 * reaped within GONE_MS; returns when the last went, in ms after @t0. */
static int64_t wait_no_children(int64_t t0, int *reaped, int *by_sigkill, int *other)
{
    for (;;) {
        int ws;
        pid_t got;
        while ((got = waitpid(-1, &ws, WNOHANG)) > 0) {
            (*reaped)++;
            if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL)
                (*by_sigkill)++;
            else
                *other = ws;
        }
        if (got < 0 && errno == ECHILD)
            return h_now_ms() - t0;
        if (h_now_ms() - t0 > 10000) {
            h_children(getpid(), NULL, 1);
            fail_msg("orphaned workers still alive 10 s after their host died");
        }
        sleep_ms(POLL_MS);
    }
}

static void test_workers_being_started_die_with_their_host(void **state)
{
    const char *e = getenv("HOST_DEATH_SEED");
    uint64_t seed = e ? strtoull(e, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    rng_state = seed ? seed : 1;
    fprintf(stderr, "  seed %" PRIu64 " (HOST_DEATH_SEED=%" PRIu64 " replays it)\n", seed, seed);
    int64_t worst = 0;
    for (int round = 0; round < 4; round++) {
        int pids[64];
        struct host h = start_host(host_starting_sessions);
        read_report(&h, "looping", pids, 64, 10000);
        int delay = rnd_ms(0, 1500);
        sleep_ms(delay);
        int64_t t0 = kill_host(&h);
        /* A worker still starting is killed by its parent-death signal,
         * or exits with CI_EXIT_PARENT (6) when it sees another parent
         * after setting it, or with 0 at its channel's EOF once ready. */
        int reaped = 0, by_sigkill = 0, other = 0;
        int64_t took = wait_no_children(t0, &reaped, &by_sigkill, &other);
        char how[64] = "";
        if (reaped > by_sigkill)
            snprintf(how, sizeof how, " (another: %s %d)",
                     WIFEXITED(other) ? "exit status" : "signal",
                     WIFEXITED(other) ? WEXITSTATUS(other) : WTERMSIG(other));
        fprintf(stderr,
                "  host killed %4d ms into its start loop: %d orphaned worker(s), %d by SIGKILL%s, "
                "all gone after %lld ms\n",
                delay, reaped, by_sigkill, how, (long long)took);
        assert_true(took <= GONE_MS);
        if (took > worst)
            worst = took;
        assert_int_equal(h_children(h.pid, NULL, 1), 0);
        leftover_dirs(&h);
    }
    fprintf(stderr, "  worst: %lld ms (bound %d ms)\n", (long long)worst, GONE_MS);
}

int main(void)
{
    h_watchdog(120);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        fprintf(stderr, "PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workers_die_with_their_host),
        cmocka_unit_test(test_workers_being_started_die_with_their_host),
    };
    return cmocka_run_group_tests_name("host death", tests, NULL, NULL);
}
