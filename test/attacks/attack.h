/*
 * Shared helpers of the attack suite (test/attacks/test_<kind>.c). Static
 * inline, as the Makefile links only the helpers in test/ (not in
 * test/attacks/) into the tests.
 *
 * Every attack program:
 *  - calls a_main_prologue() first thing in main(): it re-executes the
 *    program with a secret environment variable and a secret argument
 *    added, so the secrets are in the host's environment and command line
 *    from its very start, as a real agent host's API key would be;
 *  - starts its sessions with a_group_session() / a_session_new(), which
 *    refuse to hand out a worker that is not under a seccomp filter: as
 *    root, an unfiltered kill(-1) or a write to /usr would hit the machine,
 *    not a sandbox;
 *  - lists each test as A_TEST(f): a_setup_alive before it restarts a
 *    worker a previous attack killed and checks the new one is filtered
 *    too; a_teardown after it frees the test's cell (a_cell);
 *  - asserts from the host side that the attack had no effect, and that
 *    the cell ended with a clear error or a SandboxViolation.
 *  - names the host process HOST_PID in its cells, not os.getppid(),
 *    which in a PID namespace of the worker's own is 0 (see a_host_cell).
 *
 * A secret a cell searches for never stands in the cell's source as such:
 * cells get it as two hex-encoded halves (a_py_pair) and look for the
 * first half followed by the second (has() of test/cells/has.py), so the
 * worker never holds the whole secret unless it leaked in. A cell that
 * makes a system call by number runs after test/cells/sc.py's sc().
 */
#ifndef CI_ATTACK_H
#define CI_ATTACK_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

/* The host's secret environment variable, and the prefix of the secret
 * argument, both added by a_main_prologue(). */
#define A_ENV_NAME "CI_ATTACK_HOST_SECRET"
#define A_ARG_PREFIX "--ci-attack-argv-secret="

/* Exception names of a refused call. FileNotFoundError: in the worker's
 * mount namespace (CI_SANDBOX_MNTNS) the host's files do not exist. */
#define A_OSERR "PermissionError|OSError|FileNotFoundError"

/* ------------------------------------------------------------ secrets */

/* Writes 2 * @nbytes random hex digits and a NUL to @out. */
static inline void a_random_hex(char *out, size_t nbytes)
{
    unsigned char buf[64];
    if (nbytes > sizeof buf)
        nbytes = sizeof buf;
    size_t got = 0;
    while (got < nbytes) {
        ssize_t n = getrandom(buf + got, nbytes - got, 0);
        if (n > 0)
            got += (size_t)n;
        else if (errno != EINTR)
            abort();
    }
    for (size_t i = 0; i < nbytes; i++)
        snprintf(out + 2 * i, 3, "%02x", buf[i]);
}

/* @prefix followed by 2 * @nbytes random hex digits, in @out of @size
 * bytes: a text no file or memory holds by chance. */
static inline void a_secret_text(char *out, size_t size, const char *prefix, size_t nbytes)
{
    size_t len = strlen(prefix);
    if (nbytes > 64 || len + 2 * nbytes + 1 > size)
        abort();
    memcpy(out, prefix, len);
    a_random_hex(out + len, nbytes);
}

/* Hex of @len bytes of @s, malloc'ed. */
static inline char *a_hex(const char *s, size_t len)
{
    char *out = malloc(2 * len + 1);
    assert_non_null(out);
    for (size_t i = 0; i < len; i++)
        snprintf(out + 2 * i, 3, "%02x", (unsigned char)s[i]);
    out[2 * len] = '\0';
    return out;
}

/* A Python expression for @secret as a pair (first half, second half) of
 * bytes, spelled in hex so neither the source nor any one object holds
 * the secret. Malloc'ed. */
static inline char *a_py_pair(const char *secret)
{
    size_t len = strlen(secret), half = len / 2;
    char *a = a_hex(secret, half), *b = a_hex(secret + half, len - half);
    char *expr = h_fmt("(bytes.fromhex('%s'), bytes.fromhex('%s'))", a, b);
    free(a);
    free(b);
    return expr;
}

/* ------------------------------------------------------- the host's pid */

/*
 * A cell names the host process HOST_PID, never os.getppid(): in a PID
 * namespace of the worker's own, getppid() is 0 (the host has no pid
 * there), and an attack aimed at it would aim at nothing and pass. The
 * cell runners below (a_stopped, a_expect_value) send a cell that uses
 * HOST_PID with a first line "HOST_PID = <pid>": the test process's pid,
 * for the test process is its sessions' host. No attack asserts on the
 * traceback line numbers that line moves. An attack at the parent as the
 * worker sees it spells os.getppid().
 */

/* The last cell a_host_cell() made: freed by the next call, or by
 * a_teardown if a failed assertion left it behind. */
static char *a_host_cell_text __attribute__((unused));

/* @code, with "HOST_PID = <pid>" put first if it uses HOST_PID. */
static inline const char *a_host_cell(const char *code)
{
    free(a_host_cell_text);
    a_host_cell_text = NULL;
    if (!strstr(code, "HOST_PID"))
        return code;
    a_host_cell_text = h_fmt("HOST_PID = %d\n%s", (int)getpid(), code);
    return a_host_cell_text;
}

/* The secret argument a_main_prologue() added, or NULL. */
static inline const char *a_argv_secret(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], A_ARG_PREFIX, strlen(A_ARG_PREFIX)) == 0)
            return argv[i] + strlen(A_ARG_PREFIX);
    return NULL;
}

/*
 * Re-executes the program with A_ENV_NAME in its environment and a secret
 * argument, unless they are already there; then starts the watchdog. A
 * variable set with setenv() after start-up would live only in the heap;
 * this one is in the initial environment block, as a real host's secrets
 * are, and must not reach the worker either.
 */
static inline void a_main_prologue(int argc, char **argv, int watchdog_s)
{
    if (!getenv(A_ENV_NAME) || !a_argv_secret(argc, argv)) {
        char env[80], arg[80];
        a_secret_text(env, sizeof env, "ci-env-secret-", 16);
        a_secret_text(arg, sizeof arg, A_ARG_PREFIX "ci-argv-secret-", 16);
        setenv(A_ENV_NAME, env, 1);
        char **nargv = calloc((size_t)argc + 2, sizeof *nargv);
        if (!nargv)
            abort();
        for (int i = 0; i < argc; i++)
            nargv[i] = argv[i];
        nargv[argc] = arg;
        /* By its path, as /proc/self/exe names it: under valgrind
         * (make valgrind) /proc/self/exe itself is valgrind's tool. */
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = '\0';
            execv(self, nargv);
        }
        execv("/proc/self/exe", nargv);
        fprintf(stderr, "attack suite: cannot re-execute itself: %s\n", strerror(errno));
        exit(1);
    }
    h_watchdog(watchdog_s);
}

/* The uid (and gid) of the unprivileged host a_also_unprivileged() runs,
 * and the variable that marks its run. */
#define A_USER_UID 1000
#define A_USER_ENV "CI_ATTACK_UNPRIVILEGED_HOST"

/*
 * Run as root, runs this program once more as an unprivileged host (uid
 * and gid A_USER_UID, no supplementary groups) and returns its exit
 * status: 0 when it passed, or when that uid cannot execute the program
 * (a build tree only root may enter: skipped, saying so, and listed in
 * $CI_TEST_SKIPS). Else, and in that run itself, returns 0 at once. Call it right after a_main_prologue(): the child only changes ids
 * and execs (the watchdog's thread already runs); the watchdog and the
 * sessions of the run are its own. Its workspace roots are made under
 * /tmp.
 */
static inline int a_also_unprivileged(char **argv)
{
    if (geteuid() != 0 || getenv(A_USER_ENV))
        return 0;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 1;
    self[n] = '\0';
    setenv(A_USER_ENV, "1", 1);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setresgid(A_USER_UID, A_USER_UID, A_USER_UID) != 0 ||
            setresuid(A_USER_UID, A_USER_UID, A_USER_UID) != 0)
            _exit(126);
        if (access(self, X_OK) != 0)
            _exit(77); /* a build tree only root may enter */
        execv(self, argv);
        _exit(127);
    }
    unsetenv(A_USER_ENV);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        /* Said, and listed with make check's skips. */
        const char *skips = getenv("CI_TEST_SKIPS");
        FILE *f = skips && *skips ? fopen(skips, "a") : NULL;
        fprintf(stderr, "      skipped: the run as an unprivileged host: uid %d cannot "
                        "execute %s\n", A_USER_UID, self);
        if (f) {
            fprintf(f, "%s: the run as an unprivileged host: uid %d cannot execute it\n",
                    self, A_USER_UID);
            fclose(f);
        }
        return 0;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr, "the run as an unprivileged host (uid %d) failed: status 0x%x\n",
                A_USER_UID, st);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* "root host" or "unprivileged host": which run this is. */
static inline const char *a_host_kind(void)
{
    return geteuid() == 0 ? "root host" : "unprivileged host";
}

/* The secret a_main_prologue() put in the host's heap: a_plant_heap_secret()
 * fills it; volatile so it stays in memory. */
static volatile char *a_heap_secret __attribute__((unused));
static char a_heap_secret_copy[64] __attribute__((unused));

static inline void a_plant_heap_secret(void)
{
    char s[64] = {0}; /* all of it is copied and compared */
    a_secret_text(s, sizeof s, "ci-heap-secret-", 16);
    a_heap_secret = malloc(sizeof s);
    if (!a_heap_secret)
        abort();
    memcpy((char *)a_heap_secret, s, sizeof s);
    memcpy(a_heap_secret_copy, s, sizeof s);
}

/* Frees the heap secret, in the group's teardown, once no worker lives:
 * a test program leaks nothing (make check SANITIZE=1 runs LeakSanitizer). */
static inline void a_free_heap_secret(void)
{
    free((void *)a_heap_secret);
    a_heap_secret = NULL;
}

/* Asserts the heap secret is still what a_plant_heap_secret() wrote. */
static inline void a_assert_heap_secret_intact(void)
{
    if (memcmp((const char *)a_heap_secret, a_heap_secret_copy, sizeof a_heap_secret_copy) != 0)
        fail_msg("ATTACK SUCCEEDED: the host's heap secret was overwritten");
}

/* ------------------------------------------------ the filter, verified */

/* 1 if every thread of @pid has "Seccomp:\t2" (a filter) in its status. */
static inline int a_pid_filtered(int pid)
{
    if (pid <= 0)
        return 0;
    char *dir = h_fmt("/proc/%d/task", pid);
    DIR *d = opendir(dir);
    int n = 0, ok = d != NULL;
    struct dirent *e;
    while (ok && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *path = h_fmt("%s/%s/status", dir, e->d_name);
        char *st = h_read_file(path, NULL);
        /* A thread that ended meanwhile has no status: not a failure. */
        if (st && !strstr(st, "\nSeccomp:\t2\n"))
            ok = 0;
        n += st != NULL;
        free(st);
        free(path);
    }
    if (d)
        closedir(d);
    free(dir);
    return ok && n > 0;
}

/* 0 if @s's worker is filtered; else says so loudly and returns -1. */
static inline int a_verify(ci_session *s)
{
    int pid = ci_session_pid(s);
    if (a_pid_filtered(pid))
        return 0;
    fprintf(stderr,
            "\n*** REFUSING TO RUN ATTACKS: worker %d is not under a seccomp filter "
            "(no \"Seccomp:\\t2\" in /proc/%d/status of each thread). As root, an "
            "unfiltered kill(-1) or write to /usr would hit the machine itself. ***\n\n",
            pid, pid);
    return -1;
}

/* Fails the current test unless @s's worker is filtered. */
static inline void a_assert_filtered(ci_session *s)
{
    if (a_verify(s) != 0)
        fail_msg("worker %d is not filtered: not running the attack", ci_session_pid(s));
}

/* A session with @lim, checked filtered; NULL (having said why) if it
 * cannot be started or is not filtered. Does not assert: for group
 * setups. */
static inline ci_session *a_session_new(const struct h_limits *lim)
{
    ci_config *cfg = ci_config_new();
    if (!cfg)
        return NULL;
    int rc = CI_OK;
    if (lim) {
        if (lim->timeout_ms && rc == CI_OK)
            rc = ci_config_set_timeout_ms(cfg, lim->timeout_ms);
        if (lim->grace_ms && rc == CI_OK)
            rc = ci_config_set_grace_ms(cfg, lim->grace_ms);
        if (lim->memory && rc == CI_OK)
            rc = ci_config_set_memory_limit(cfg, lim->memory);
        if (lim->output && rc == CI_OK)
            rc = ci_config_set_output_limit(cfg, lim->output);
        if (lim->file && rc == CI_OK)
            rc = ci_config_set_file_limit(cfg, lim->file);
        if (lim->root && rc == CI_OK)
            rc = ci_config_set_workspace_root(cfg, lim->root);
        if (lim->inode_quota && rc == CI_OK)
            rc = ci_config_set_inode_quota(cfg, lim->inode_quota);
    }
    ci_session *s = NULL;
    if (rc == CI_OK)
        rc = ci_session_new(&s, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK) {
        fprintf(stderr, "attack setup: session: %d (%s): %s\n", rc, ci_strerror(rc),
                ci_session_errmsg(NULL));
        return NULL;
    }
    if (a_verify(s) != 0) {
        ci_session_free(s);
        return NULL;
    }
    return s;
}

/* The group's session, as h_group_session() keeps it, for a_setup_alive. */
static ci_session *a_group __attribute__((unused));

/* h_group_session() plus the filter check; 0 or -1. */
static inline int a_group_session(ci_session **s, const struct h_limits *lim)
{
    if (h_group_session(s, lim) != 0)
        return -1;
    a_group = *s;
    return a_verify(*s);
}

/* Restarts @s if it is dead, and asserts its worker is filtered. */
static inline void a_alive(ci_session *s)
{
    h_ensure_alive(s);
    a_assert_filtered(s);
}

/* Setup of every attack test: the group's worker alive and filtered. */
static inline int a_setup_alive(void **state)
{
    h_setup_alive(state);
    return a_verify(a_group);
}

/* The current test's cell, when the test builds it with h_fmt(): freed
 * by a_teardown, whether the test passed or failed. */
static char *a_cell __attribute__((unused));

/* Teardown of every attack test: frees a_cell, and the last cell sent
 * with HOST_PID. Always 0. */
static inline int a_teardown(void **state)
{
    free(a_cell);
    a_cell = NULL;
    free(a_host_cell_text);
    a_host_cell_text = NULL;
    return 0;
}

/* An attack test with the setup and teardown above. */
#define A_TEST(f) cmocka_unit_test_setup_teardown(f, a_setup_alive, a_teardown)

/* --------------------------------------------------- running an attack */

/* 1 if @name is one of the '|'-separated names in @names. */
static inline int a_name_in(const char *name, const char *names)
{
    size_t n = strlen(name);
    for (const char *p = names; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = bar ? bar + 1 : NULL;
    }
    return 0;
}

/* After a cell that raised: the worker is the same and still runs cells. */
static inline void a_assert_continues(ci_session *s, int pid)
{
    assert_int_equal(ci_session_pid(s), pid);
    h_expect(s, "'still here'", "'still here'", NULL);
}

/*
 * Runs attack cell @code, written to raise if the attack is stopped and to
 * end normally if it worked. Asserts it was stopped with a clear status:
 * CI_STATUS_ERROR with an exception named in @names ('|'-separated), the
 * session going on; or CI_STATUS_KILLED with "SandboxViolation", after
 * which the session is restarted and checked filtered again. Returns the
 * status.
 */
static inline ci_status a_stopped(ci_session *s, const char *code, const char *names)
{
    int pid = ci_session_pid(s);
    ci_result *r = h_run(s, a_host_cell(code));
    ci_status st = ci_result_status(r);
    const char *n = ci_result_error_name(r);
    if (st == CI_STATUS_ERROR && n && a_name_in(n, names)) {
        ci_result_free(r);
        a_assert_continues(s, pid);
        return st;
    }
    if (st == CI_STATUS_KILLED && n && strcmp(n, "SandboxViolation") == 0) {
        ci_result_free(r);
        assert_int_equal(ci_session_pid(s), -1);
        a_alive(s);
        return st;
    }
    h_dump(r);
    if (st == CI_STATUS_OK)
        fail_msg("ATTACK SUCCEEDED: the cell ran to its end\n  cell: %s", code);
    fail_msg("the attack ended with %s %s, expected an error in {%s} or SandboxViolation\n"
             "  cell: %s",
             h_status_name(st), n ? n : "(no error)", names, code);
    return st;
}

/* Runs @code, asserts CI_STATUS_OK and value @want (h_same_value); on
 * another value reports ATTACK SUCCEEDED with @what. */
static inline void a_expect_value(ci_session *s, const char *code, const char *want,
                                  const char *what)
{
    ci_result *r = h_run(s, a_host_cell(code));
    const char *v = ci_result_value(r);
    if (ci_result_status(r) != CI_STATUS_OK) {
        h_dump(r);
        fail_msg("probe cell failed with %s, expected value %s\n  cell: %s",
                 h_status_name(ci_result_status(r)), want, code);
    }
    if (!v || !h_same_value(v, want)) {
        h_dump(r);
        fail_msg("ATTACK SUCCEEDED: %s: value %s, expected %s\n  cell: %s", what,
                 v ? v : "(null)", want, code);
    }
    ci_result_free(r);
}

/* ------------------------------------------------- host-side evidence */

/* A test-owned directory of @mode, so that only the sandbox (not the
 * permission bits) keeps a worker of another uid out of it. */
static inline char *a_tmpdir(mode_t mode)
{
    char *d = h_tmpdir();
    if (chmod(d, mode) != 0)
        fail_msg("chmod %s: %s", d, strerror(errno));
    return d;
}

/* Writes @text to @path with @mode (umask ignored). */
static inline void a_write_canary(const char *path, const char *text, mode_t mode)
{
    h_write_file(path, text, strlen(text));
    if (chmod(path, mode) != 0)
        fail_msg("chmod %s: %s", path, strerror(errno));
}

/* Writes @text to @dir/canary with @mode; the path, malloc'ed. */
static inline char *a_canary(const char *dir, const char *text, mode_t mode)
{
    char *path = h_fmt("%s/canary", dir);
    a_write_canary(path, text, mode);
    return path;
}

/* A process of the test's own for attacks to aim at: it pauses until
 * a_sentinel_stop() and dies with the test (PR_SET_PDEATHSIG). Its pid,
 * or -1 if fork failed. */
static inline pid_t a_sentinel_start(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;)
            pause();
    }
    return pid;
}

/* Kills and reaps the sentinel *@pid, if there is one; *@pid becomes -1. */
static inline void a_sentinel_stop(pid_t *pid)
{
    if (*pid > 0) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
    }
    *pid = -1;
}

/* An inotify descriptor watching @path for any access. */
static inline int a_watch(const char *path)
{
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd < 0)
        fail_msg("inotify_init1: %s", strerror(errno));
    uint32_t mask = IN_ACCESS | IN_MODIFY | IN_ATTRIB | IN_OPEN | IN_CLOSE_WRITE |
                    IN_DELETE_SELF | IN_MOVE_SELF | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
                    IN_MOVED_TO;
    if (inotify_add_watch(fd, path, mask) < 0)
        fail_msg("inotify_add_watch %s: %s", path, strerror(errno));
    return fd;
}

/* The events @fd has seen since the last call, OR'ed; 0 for none. */
static inline uint32_t a_watch_events(int fd)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    uint32_t mask = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *ev = (struct inotify_event *)p;
            mask |= ev->mask;
            p += sizeof *ev + ev->len;
        }
    }
    return mask & ~IN_IGNORED;
}

/* Asserts the watch saw nothing, then closes it. */
static inline void a_assert_untouched(int watch, const char *what)
{
    uint32_t m = a_watch_events(watch);
    close(watch);
    if (m)
        fail_msg("ATTACK SUCCEEDED: %s was accessed from the worker (inotify mask 0x%x)", what,
                 m);
}

/* Asserts @path holds exactly @want. */
static inline void a_assert_file_is(const char *path, const char *want)
{
    size_t len = 0;
    char *t = h_read_file(path, &len);
    if (!t)
        fail_msg("ATTACK SUCCEEDED: %s is gone: %s", path, strerror(errno));
    if (len != strlen(want) || memcmp(t, want, len) != 0)
        fail_msg("ATTACK SUCCEEDED: %s was changed to \"%.200s\"", path, t);
    free(t);
}

/* Asserts nothing is at @path; removes what an attack left there. */
static inline void a_assert_absent(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            h_rmtree(path);
        else
            unlink(path);
        fail_msg("ATTACK SUCCEEDED: %s was created from the worker", path);
    }
}

/* Processes other than @worker in @worker's session (setsid made it its
 * leader) or with it as parent: what a cell that forked left behind.
 * Kills each (they are ours) and returns how many there were. */
static inline int a_kill_strays(int worker)
{
    int found = 0;
    if (worker <= 0)
        return 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == worker)
            continue;
        char st;
        int ppid, sid;
        if (!h_proc_stat((int)pid, &st, &ppid, &sid))
            continue;
        if (sid == worker || ppid == worker) {
            fprintf(stderr, "stray process %ld (parent %d, session %d) of worker %d\n", pid,
                    ppid, sid, worker);
            kill((pid_t)pid, SIGKILL);
            found++;
        }
    }
    closedir(d);
    return found;
}

/* Asserts no process came of @worker's cell and that the cell did not
 * leave @marker (a name in @s's workspace; NULL for none). */
static inline void a_assert_no_process(ci_session *s, int worker, const char *marker)
{
    /* A child the cell did start needs a moment to show its effect. */
    usleep(100 * 1000);
    int strays = a_kill_strays(worker);
    if (marker) {
        char *p = h_fmt("%s/%s", ci_session_workspace(s), marker);
        struct stat st;
        int made = lstat(p, &st) == 0;
        unlink(p);
        free(p);
        if (made)
            fail_msg("ATTACK SUCCEEDED: a new process ran and left %s in the workspace", marker);
    }
    if (strays)
        fail_msg("ATTACK SUCCEEDED: the cell started %d process(es)", strays);
}

/* The value of "@key:\t" in /proc/self/status, or -1. */
static inline long a_self_status(const char *key)
{
    char *st = h_read_file("/proc/self/status", NULL);
    long v = -1;
    char *want = h_fmt("\n%s:", key);
    char *p = st ? strstr(st, want) : NULL;
    if (p)
        v = strtol(p + strlen(want), NULL, 10);
    free(want);
    free(st);
    return v;
}

/* Python string literal of @s (no quotes or backslashes in test paths). */
static inline char *a_pystr(const char *s)
{
    if (strchr(s, '\'') || strchr(s, '\\') || strchr(s, '\n'))
        fail_msg("path %s cannot be quoted simply", s);
    return h_fmt("'%s'", s);
}

#endif /* CI_ATTACK_H */
