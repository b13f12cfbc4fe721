/*
 * The zygote (lib/zygote.c, lib/worker/zygote.c): sessions forked from one
 * warm worker are still each other's strangers, get their own session
 * (directories, limits, random state), and never depend on the zygote
 * staying alive. SECURITY.md, "Forked from a zygote", promises each of
 * these; the attack suites run against zygote-forked workers too.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "zygote.h" /* ci_zygote_stop_all */

/* Our living children named @name, up to @max in @pids; how many. With
 * @group 0, those that lead a session of their own (a zygote; a spare,
 * named as it is for a moment after its fork, does not); else those in
 * process group @group (a zygote's spares). */
static int ours_named(const char *name, int group, int *pids, int max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    assert_non_null(d);
    while ((e = readdir(d))) {
        char st;
        int ppid, sid, pid = atoi(e->d_name);
        if (pid > 0 && h_proc_stat(pid, &st, &ppid, &sid) && ppid == getpid() && st != 'Z' &&
            (group ? getpgid(pid) == group && pid != group : sid == pid) &&
            h_proc_named(pid, name) && n < max)
            pids[n++] = pid;
    }
    closedir(d);
    return n;
}

/* The living zygote children of ours, up to @max in @pids; how many. */
static int zygotes(int *pids, int max)
{
    return ours_named("ci-zygote", 0, pids, max);
}

/* The living spares of zygote @z, up to @max in @pids; how many. */
static int spares(int z, int *pids, int max)
{
    return ours_named("ci-spare", z, pids, max);
}

/* 1 if zygote @z is past its warm-up: a spare is there, in its group. */
static int serving(int z)
{
    int pid;
    return spares(z, &pid, 1) == 1;
}

/* CRC-32 (ISO-HDLC, as zlib.crc32), bit by bit. */
static unsigned crc32(const unsigned char *p, size_t n)
{
    unsigned c = 0xFFFFFFFFu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & -(c & 1u));
    }
    return c ^ 0xFFFFFFFFu;
}

/* The cell's value, as a malloc'ed string. */
static char *value_of(ci_session *s, const char *code)
{
    ci_result *r = h_run_status(s, code, CI_STATUS_OK);
    assert_non_null(ci_result_value(r));
    char *v = strdup(ci_result_value(r));
    ci_result_free(r);
    return v;
}

static void test_sessions_of_one_zygote_are_separate_processes(void **state)
{
    ci_session *a = h_session(NULL), *b = h_session(NULL);
    int z[4];

    /* One zygote, and both workers are our children, not its. */
    assert_int_equal(zygotes(z, 4), 1);
    for (int i = 0; i < 2; i++) {
        ci_session *s = i ? b : a;
        char st;
        int ppid, sid, pid = ci_session_pid(s);
        assert_true(pid > 0 && pid != z[0]);
        assert_true(h_proc_stat(pid, &st, &ppid, &sid));
        assert_int_equal(ppid, getpid());
        assert_int_equal(sid, pid); /* its own session, not the zygote's */
        assert_false(h_is_zygote(pid));
        /* Each one pid 1 of a PID namespace of its own, or where the
         * kernel refuses that, seeing its host-side pid and us. */
        char *want = ci_session_sandbox(s) & CI_SANDBOX_PIDNS
                         ? h_fmt("(1, 0)")
                         : h_fmt("(%d, %d)", pid, (int)getpid());
        h_expect(s, "import os\nos.getpid(), os.getppid()", want, "");
        free(want);
    }
    /* State is each one's own. */
    h_expect(a, "x = 'a'\nx", "'a'", "");
    h_expect_error(b, "x", "NameError", NULL);
    ci_session_free(a);
    ci_session_free(b);
}

static void test_each_session_draws_its_own_random_numbers(void **state)
{
    ci_session *a = h_session(NULL), *b = h_session(NULL);
    static const char code[] =
        "import random, numpy as np\n"
        "(random.getrandbits(64), int(np.random.randint(0, 2**62)),\n"
        " int(np.random.default_rng().integers(0, 2**62)))";
    char *va = value_of(a, code), *vb = value_of(b, code);
    /* A fork copies every generator: equal draws would mean a session can
     * predict another's. Three 62-bit-or-wider draws: no chance match. */
    if (!strcmp(va, vb))
        fail_msg("two sessions drew the same numbers: %s", va);
    ci_session_free(a);
    ci_session_free(b);
    free(va);
    free(vb);
}

static void test_each_session_has_its_own_directories_and_settings(void **state)
{
    ci_config *cfg = h_config(NULL);
    assert_int_equal(ci_config_set_figure_dpi(cfg, 50), CI_OK);
    ci_session *a = h_session(NULL), *b;
    assert_int_equal(ci_session_new(&b, cfg), CI_OK);
    for (int i = 0; i < 2; i++) {
        ci_session *s = i ? b : a;
        const char *ws = ci_session_workspace(s);
        char *dir = strdup(ws);
        *strrchr(dir, '/') = '\0';
        /* HOME, MPLCONFIGDIR and TMPDIR are the session's, in the C
         * environment and in what matplotlib and tempfile remember. */
        char *want = h_fmt("('%s', '%s/config', '%s/config', '%s/tmp', '%s/tmp', '%s/config', "
                           "%s)",
                           ws, dir, dir, dir, dir, dir, i ? "50.0" : "100.0");
        char *line = h_fmt("%s\n", want);
        /* print(): a value this long is pretty-printed over lines. */
        h_expect(s,
                 "import os, tempfile, matplotlib, matplotlib.pyplot as plt\n"
                 "print((os.getcwd(), os.environ['HOME'], os.environ['MPLCONFIGDIR'],\n"
                 " os.environ['TMPDIR'], tempfile.gettempdir(), matplotlib.get_configdir(),\n"
                 " float(plt.rcParams['figure.dpi'])))",
                 NULL, line);
        free(line);
        /* The workspace ends the search path, once: the spare's rehearsal
         * of this setup (ci_interp_prefault) left nothing there. */
        free(want);
        want = h_fmt("(True, 1, ['%s'])", ws);
        h_expect(s, "import os, sys\n(sys.path[-1] == os.getcwd(), sys.path.count(os.getcwd()),\n"
                    " [p for p in sys.path if not p.startswith('/usr/')])",
                 want, "");
        free(want);
        free(dir);
    }
    ci_session_free(a);
    ci_session_free(b);
    ci_config_free(cfg);
}

static void test_sessions_cannot_signal_each_other_or_the_zygote(void **state)
{
    ci_session *a = h_session(NULL), *b = h_session(NULL);
    int z[4];
    assert_int_equal(zygotes(z, 4), 1);
    int targets[2] = {ci_session_pid(b), z[0]};
    for (int i = 0; i < 2; i++) {
        /* Through libc, past the audit hook: the kernel refuses. */
        char *code = h_fmt("import ctypes, os\n"
                           "libc = ctypes.CDLL(None, use_errno=True)\n"
                           "(libc.kill(%d, 9), ctypes.get_errno() == 1)",
                           targets[i]);
        h_expect(a, code, "(-1, True)", "");
        free(code);
        char st;
        int ppid, sid;
        assert_true(h_proc_stat(targets[i], &st, &ppid, &sid));
        assert_int_not_equal(st, 'Z');
    }
    h_expect(b, "1 + 1", "2", "");
    ci_session_free(a);
    ci_session_free(b);
}

/* The hexadecimal value of @field ("CapEff:") in /proc/@pid/status. */
static unsigned long long status_hex(int pid, const char *field)
{
    char *path = h_fmt("/proc/%d/status", pid), *text = h_read_file(path, NULL);
    const char *at = strstr(text, field);
    assert_non_null(at);
    unsigned long long v = strtoull(at + strlen(field), NULL, 16);
    free(text);
    free(path);
    return v;
}

/* 1 if /proc/@pid/ns/@ns names the namespace ours does; -1 if we may
 * not read it (@pid is not dumpable: that takes CAP_SYS_PTRACE, which a
 * host that is not root, or a container's root, may lack). */
static int same_namespace(int pid, const char *ns)
{
    char *a = h_fmt("/proc/%d/ns/%s", pid, ns), *b = h_fmt("/proc/self/ns/%s", ns);
    char la[64] = "", lb[64] = "";
    ssize_t n = readlink(a, la, sizeof la - 1);
    int err = errno;
    assert_true(readlink(b, lb, sizeof lb - 1) > 0);
    free(a);
    free(b);
    if (n < 0 && err == EACCES)
        return -1;
    assert_true(n > 0);
    return strcmp(la, lb) == 0;
}

static void test_a_new_session_starts_with_an_empty_namespace(void **state)
{
    /* Nothing of the warm-up, nor of the spare's rehearsal of a first
     * cell (ci_interp_prefault), is in the cell's namespace or caches:
     * only what IPython's shell puts there, as in a kernel (In, Out, the
     * history's names, get_ipython, exit and quit). */
    ci_session *s = h_session(NULL);
    h_expect(s,
             "import linecache\n"
             "print(*sorted(k for k in globals() if not k.startswith('__')))\n"
             "print(*sorted(k for k in linecache.cache if k.startswith('<cell')))\n"
             "print(len(In), repr(_i + _ii + _iii), len(Out), get_ipython().execution_count)",
             NULL, "In Out _ _dh _i _i1 _ih _ii _iii _oh exit get_ipython linecache quit\n<cell 1>\n"
             "2 '' 0 1\n");
    h_expect_error(s, "x", "NameError", "name 'x' is not defined");
    ci_session_free(s);
}

static void test_the_zygote_keeps_one_capability_in_namespaces_of_its_own(void **state)
{
    ci_session *s = h_session(NULL);
    int z[4];
    assert_int_equal(zygotes(z, 4), 1);
    /* CAP_SYS_ADMIN (21), for open_tree(2), over its own user and mount
     * namespaces only; none anywhere where the kernel refuses those. */
    int user = same_namespace(z[0], "user"), mnt = same_namespace(z[0], "mnt");
    if (user < 0 || mnt < 0)
        h_skip_part_because("the zygote's namespaces, whose /proc/PID/ns links this process may "
                            "not read (not root, or without CAP_SYS_PTRACE)");
    if (!(ci_session_sandbox(s) & CI_SANDBOX_USERNS)) {
        print_message("      no user namespaces here: the zygote keeps no capability\n");
        assert_true(user != 0);
        assert_int_equal(status_hex(z[0], "CapEff:"), 0);
    } else if (!(ci_session_sandbox(s) & CI_SANDBOX_MNTNS)) {
        /* mount(2) refused (a container's filter): the zygote, which can
         * copy no directory, keeps nothing either. */
        print_message("      no mount namespace here: the zygote keeps no capability\n");
        assert_int_equal(status_hex(z[0], "CapEff:"), 0);
        assert_int_equal(status_hex(z[0], "CapPrm:"), 0);
    } else {
        assert_true(user <= 0);
        assert_true(mnt <= 0);
        assert_int_equal(status_hex(z[0], "CapEff:"), 1ull << 21);
        assert_int_equal(status_hex(z[0], "CapPrm:"), 1ull << 21);
        assert_int_equal(status_hex(z[0], "CapBnd:"), 1ull << 21);
    }
    assert_int_equal(status_hex(z[0], "CapInh:"), 0);
    assert_int_equal(status_hex(z[0], "CapAmb:"), 0);
    /* Its session has none at all, and its root holds the session
     * directory alone of the host's /tmp, read-only but for that. */
    assert_int_equal(status_hex(ci_session_pid(s), "CapEff:"), 0);
    assert_int_equal(status_hex(ci_session_pid(s), "CapPrm:"), 0);
    if (!h_has_layer(s, CI_SANDBOX_MNTNS, "the worker's root")) {
        ci_session_free(s);
        return;
    }
    char *dir = strdup(ci_session_workspace(s));
    *strrchr(dir, '/') = '\0';
    char *cell = h_cell("zygote_root_and_mounts_above");
    char *code = h_fmt("SESSION_DIR = '%s'\n%s", dir, cell);
    free(cell);
    char *want = h_fmt("(True, True, ['%s'])", dir);
    h_expect(s, code, want, "");
    free(want);
    free(code);
    free(dir);
    ci_session_free(s);
}

static void test_a_workspace_root_through_a_link_is_resolved(void **state)
{
    char *real = h_tmpdir(), *link = h_fmt("%s-link", real), *dots = h_fmt("%s/../%s", real,
                                                                                strrchr(real, '/') + 1);
    assert_int_equal(symlink(real, link), 0);
    const char *roots[] = {link, dots};
    for (int i = 0; i < 2; i++) {
        ci_session *s = h_session(&(struct h_limits){.root = roots[i]});
        const char *ws = ci_session_workspace(s);
        char *dir = strdup(ws);
        *strrchr(dir, '/') = '\0';
        /* One name for the session directory, inside and out: the root
         * with its link or dots resolved. */
        assert_int_equal(strncmp(ws, real, strlen(real)), 0);
        assert_int_equal(ws[strlen(real)], '/');
        char *code = strdup("import os, tempfile\n"
                            "open('f.txt', 'w').write('x')\n"
                            "open(os.environ['HOME'] + '/h.txt', 'w').write('y')\n"
                            "print((os.getcwd(), os.environ['HOME'], "
                            "os.path.dirname(tempfile.mkstemp()[1])))");
        char *want = h_fmt("('%s', '%s/config', '%s/tmp')\n", ws, dir, dir);
        h_expect(s, code, NULL, want);
        char *f = h_fmt("%s/f.txt", ws), *h = h_fmt("%s/config/h.txt", dir);
        size_t len;
        free(h_read_file(f, &len));
        assert_int_equal(len, 1);
        free(h_read_file(h, &len));
        assert_int_equal(len, 1);
        ci_session_free(s);
        free(h);
        free(f);
        free(want);
        free(code);
        free(dir);
    }
    assert_int_equal(unlink(link), 0);
    h_rmtree(real);
    free(dots);
    free(link);
    free(real);
}

static void test_a_root_the_zygote_cannot_see_starts_its_worker_by_exec(void **state)
{
    if (geteuid() != 0) {
        h_skip_because("mounting a tmpfs needs root");
    }
    /* A mount made after the zygote started: where mounts do not
     * propagate (this machine's are private), its copy lacks it. */
    ci_session *first = h_session(NULL);
    char *root = h_tmpdir();
    int mounted = mount("ci-test", root, "tmpfs", 0, "size=1m,mode=0711");
    if (mounted != 0 && errno == EPERM) {
        ci_session_free(first);
        h_rmtree(root);
        free(root);
        h_skip_because("mounting a tmpfs needs CAP_SYS_ADMIN, which this root lacks (a "
                       "container)");
    }
    assert_int_equal(mounted, 0);
    int z[4];
    assert_int_equal(zygotes(z, 4), 1);
    char *zmounts = h_fmt("/proc/%d/mountinfo", z[0]), *seen = h_read_file(zmounts, NULL);
    char *as_mount = h_fmt(" %s ", root);
    int zygote_sees_it = strstr(seen, as_mount) != NULL;
    /* Without a disk quota: with one, the zygote's child attaches the
     * host's copy of the quota's tmpfs, and needs no copy of its own
     * (below). */
    ci_config *cfg = h_config(&(struct h_limits){.root = root});
    assert_int_equal(ci_config_set_disk_quota(cfg, 0), CI_OK);
    ci_session *s;
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    h_expect(s, "open('f.txt', 'w').write('x')", "1", "");
    char *f = h_fmt("%s/f.txt", ci_session_workspace(s));
    size_t len;
    free(h_read_file(f, &len));
    assert_int_equal(len, 1);
    /* Where mounts propagate, the zygote's copy has it and forks the
     * worker; else the host started it by exec, which has no PID
     * namespace. Either way the session works. */
    print_message("      the zygote %s the new mount\n", zygote_sees_it ? "sees" : "does not see");
    assert_int_equal(!!(ci_session_sandbox(s) & CI_SANDBOX_PIDNS),
                     zygote_sees_it && (h_probe(1)->layers & CI_SANDBOX_PIDNS));
    ci_session_free(s);
    /* With the quota, where the host could mount its tmpfs, the zygote
     * forks the worker whether it sees the root or not. */
    ci_config_free(cfg);
    cfg = h_config(&(struct h_limits){.root = root});
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    h_expect(s, "open('f.txt', 'w').write('x')", "1", "");
    if (ci_session_sandbox(s) & CI_SANDBOX_DISK_QUOTA)
        assert_int_equal(!!(ci_session_sandbox(s) & CI_SANDBOX_PIDNS),
                         !!(h_probe(1)->layers & CI_SANDBOX_PIDNS));
    ci_session_free(s);
    ci_config_free(cfg);
    free(as_mount);
    free(seen);
    free(zmounts);
    ci_session_free(first);
    assert_int_equal(umount(root), 0);
    h_rmtree(root);
    free(f);
    free(root);
}

static void test_a_workspace_root_under_usr_is_refused(void **state)
{
    if (geteuid() != 0) {
        h_skip_because("making a directory under /usr needs root");
    }
    /* The worker binds /usr from the host, and Landlock lets a cell read
     * it: sessions there would read each other's directories. */
    char root[] = "/usr/local/share/ci-test-XXXXXX";
    if (!mkdtemp(root)) {
        if (errno == EROFS)
            h_skip_because("/usr is read-only here (a container's read-only root)");
        fail_msg("mkdtemp %s: %s", root, strerror(errno));
    }
    assert_int_equal(chmod(root, 0711), 0);
    for (int zygote = 1; zygote >= 0; zygote--) {
        ci_config *cfg = h_config(&(struct h_limits){.root = root});
        assert_int_equal(ci_config_set_zygote(cfg, zygote), CI_OK);
        h_start_fails(cfg, CI_ESPAWN, "is inside a directory the sandbox binds from the host");
        ci_config_free(cfg);
    }
    h_rmtree(root);
}

static void test_dead_spares_are_passed_over_and_the_zygote_kept(void **state)
{
    ci_session *a = h_session(NULL);
    int z[4], z2[4], pids[4], n = 0;
    assert_int_equal(zygotes(z, 4), 1);
    /* Its pool refilled (a second spare follows 10 ms after a hand-out). */
    for (int i = 0; i < 250 && (n = spares(z[0], pids, 4)) < 2; i++)
        usleep(20000);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++)
        assert_int_equal(kill(pids[i], SIGKILL), 0);
    for (int i = 0; i < 250 && spares(z[0], pids, 4) > 0; i++)
        usleep(20000);
    /* The host reaps them with the group before it asks; the zygote then
     * names each dead one (ASSIGNED), finds it gone, and forks another:
     * same zygote, and the session starts. */
    ci_session *b = h_session(NULL);
    h_expect(b, "1 + 1", "2", "");
    assert_int_equal(zygotes(z2, 4), 1);
    assert_int_equal(z2[0], z[0]);
    ci_session_free(b);
    ci_session_free(a);
}

static void test_a_killed_zygote_is_replaced_and_its_sessions_live_on(void **state)
{
    ci_session *a = h_session(NULL);
    int z[4], z2[4];
    assert_int_equal(zygotes(z, 4), 1);
    h_expect(a, "y = 41\ny", "41", "");
    assert_int_equal(kill(z[0], SIGKILL), 0);
    /* The session forked before is not the zygote's to take along. */
    h_expect(a, "y + 1", "42", "");
    /* The next session gets a new zygote; the dead one is reaped. */
    ci_session *b = h_session(NULL);
    h_expect(b, "'y' in globals()", "False", "");
    assert_int_equal(zygotes(z2, 4), 1);
    assert_int_not_equal(z2[0], z[0]);
    int zombies = 0;
    h_children(getpid(), &zombies, 0);
    if (zombies)
        h_children(getpid(), &zombies, 1);
    assert_int_equal(zombies, 0);
    assert_int_equal(waitpid(z[0], NULL, WNOHANG), -1); /* already reaped */
    assert_int_equal(errno, ECHILD);
    /* A restart uses the new zygote too. */
    assert_int_equal(ci_session_restart(a), CI_OK);
    h_expect(a, "'y' in globals()", "False", "");
    ci_session_free(a);
    ci_session_free(b);
}

static void test_requiring_a_pid_namespace_without_the_zygote_fails_at_once(void **state)
{
    ci_config *off = h_config(NULL);
    ci_session *s = (ci_session *)&s;
    int before = h_children_but_spares(getpid());
    assert_int_equal(ci_config_set_zygote(off, 0), CI_OK);
    assert_int_equal(ci_config_require_sandbox(off, CI_SANDBOX_SECCOMP | CI_SANDBOX_PIDNS), CI_OK);
    assert_int_equal(ci_session_new(&s, off), CI_ESANDBOX);
    assert_null(s);
    h_assert_contains(ci_session_errmsg(NULL),
                      "a required sandbox layer is not available: PID namespace (only a worker "
                      "forked from the zygote has one, and the zygote is off)");
    /* Said before any worker started: no child is new. (One of an
     * earlier test that the library's reaper thread reaps meanwhile, on a
     * loaded machine, makes the count smaller, never larger.) */
    assert_true(h_children_but_spares(getpid()) <= before);
    ci_config_free(off);
}

static void test_zygote_children_share_its_hash_seed_and_exec_workers_do_not(void **state)
{
    /* SECURITY.md says what a fork shares: CPython's string-hash seed is
     * one; a worker started by exec draws its own. */
    static const char code[] = "hash('codeinterp')";
    ci_config *off = h_config(NULL);
    assert_int_equal(ci_config_set_zygote(off, 0), CI_OK);
    ci_session *a = h_session(NULL), *b = h_session(NULL), *c, *d;
    assert_int_equal(ci_session_new(&c, off), CI_OK);
    assert_int_equal(ci_session_new(&d, off), CI_OK);
    char *va = value_of(a, code), *vb = value_of(b, code);
    char *vc = value_of(c, code), *vd = value_of(d, code);
    h_assert_str(va, vb);
    assert_string_not_equal(vc, vd);
    assert_string_not_equal(va, vc);
    /* Each has what this kernel gives a worker made its way (the PID
     * namespace only a zygote's child, and where user namespaces are
     * refused a root host's exec'd worker makes the others as root). */
    const struct h_probe *forked = h_probe(1), *exec = h_probe(0);
    assert_int_equal(ci_session_sandbox(a) & ~forked->unknown, forked->layers & ~forked->unknown);
    assert_int_equal(ci_session_sandbox(c) & ~exec->unknown, exec->layers & ~exec->unknown);
    assert_int_equal(ci_session_sandbox(c) & CI_SANDBOX_PIDNS, 0);
    /* Frozen objects: the collector leaves the warm-up's pages shared. */
    h_expect(a, "import gc\ngc.get_freeze_count() > 10000", "True", "");
    h_expect(c, "import gc\ngc.get_freeze_count()", "0", "");
    free(va);
    free(vb);
    free(vc);
    free(vd);
    ci_session_free(a);
    ci_session_free(b);
    ci_session_free(c);
    ci_session_free(d);
    ci_config_free(off);
}

static void test_preload_list_gets_its_own_zygote(void **state)
{
    ci_config *cfg = h_config(NULL);
    ci_session *s = NULL;
    int z[4];
    assert_int_equal(ci_config_set_preload(cfg, "wave,sched"), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    h_expect(s,
             "import sys\n[m in sys.modules for m in ('wave', 'sched', 'pandas', "
             "'matplotlib.pyplot')]",
             "[True, True, False, True]", "");
    ci_session_free(s);
    assert_true(zygotes(z, 4) >= 2); /* the default list's, and this one's */
    /* Malformed lists are refused at once, a missing module at the start. */
    static const char *const bad[] = {"", "numpy, pandas", "numpy,", ".numpy", "numpy..x",
                                      "1numpy", "numpy;import os", "n\xc3\xa9"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(ci_config_set_preload(cfg, bad[i]), CI_EINVAL);
    assert_int_equal(ci_config_set_preload(NULL, "json"), CI_EINVAL);
    assert_int_equal(ci_config_set_preload(cfg, NULL), CI_EINVAL);
    assert_int_equal(ci_config_set_zygote(cfg, 2), CI_EINVAL);
    assert_int_equal(ci_config_set_zygote(NULL, 1), CI_EINVAL);
    assert_int_equal(ci_config_set_preload(cfg, "no_such_module_here"), CI_OK);
    s = NULL;
    assert_int_equal(ci_session_new(&s, cfg), CI_ESPAWN);
    assert_null(s);
    h_assert_contains(ci_session_errmsg(NULL), "no_such_module_here");
    ci_config_free(cfg);
}

static void test_a_session_finds_nothing_of_the_one_before_in_its_memory(void **state)
{
    /* The zygote received session A's directory; the spare forked after
     * it must not carry that path into session B. Roots of different
     * lengths, so a shorter path would not overwrite the longer one. */
    char *base = h_tmpdir();
    char *long_root = h_fmt("%s/a-long-root-name-only-session-a-ever-had-xxxxxxxxxxxxxxxx", base);
    assert_int_equal(mkdir(long_root, 0711), 0);
    ci_session *a = h_session(&(struct h_limits){.root = long_root});
    const char *ws = ci_session_workspace(a);
    char *a_dir = strndup(ws, strlen(ws) - strlen("/workspace"));
    const char *a_name = strrchr(a_dir, '/') + 1; /* codeinterp-XXXXXX */
    ci_session *b = h_session(&(struct h_limits){.root = base});
    /* Every writable mapping of B but the kernel's ([vvar] and such),
     * read in place, searched for session directory names. A's is given as its CRC-32
     * only: its name in the cell's source would be in B's memory. */
    char *cell = h_cell("zygote_session_names_in_memory");
    char *code = h_fmt("NAME_CRC = %u\n%s", crc32((const unsigned char *)a_name, strlen(a_name)),
                       cell);
    free(cell);
    /* The scan works (it finds B's own name), and A's is not there. */
    char *found = value_of(b, code);
    free(code);
    ci_session_free(b);
    ci_session_free(a);
    h_assert_str(found, "(True, [])");
    free(found);
    free(a_dir);
    free(long_root);
    h_rmtree(base);
    free(base);
}

/* Starts, runs and frees sessions until told to stop; counts them. */
struct churn {
    pthread_t thread;
    atomic_int *stop, *total; /* shared by the threads */
    int started, failed;
};

static void *churn_main(void *arg)
{
    struct churn *c = arg;
    while (!atomic_load(c->stop)) {
        ci_session *s = NULL;
        ci_result *r = NULL;
        if (ci_session_new(&s, NULL) != CI_OK || ci_run(s, "6 * 7", &r) != CI_OK ||
            ci_result_status(r) != CI_STATUS_OK || strcmp(ci_result_value(r), "42") != 0) {
            fprintf(stderr, "  a start failed: %s\n",
                    s ? ci_session_errmsg(s) : ci_session_errmsg(NULL));
            c->failed++;
        }
        c->started++;
        atomic_fetch_add(c->total, 1);
        ci_result_free(r);
        ci_session_free(s);
    }
    return NULL;
}

static void test_killing_the_zygote_while_sessions_start_fails_none(void **state)
{
    /* A zygote dropped while a worker it answered with is still being
     * started must not take that worker along: the spare leaves the
     * zygote's group before the zygote answers. Three threads start
     * sessions while the zygote is killed, four times, each time once
     * its successor is serving. (One killed during its own warm-up fails
     * the start that waits for it, as a worker killed while starting
     * does: that is not what this tests.) */
    atomic_int stop = 0, total = 0;
    struct churn c[3];
    int z[4], last = 0, kills = 0, zombies = 0, started = 0, failed = 0, at_kill = 0;
    ci_zygote_stop_all(); /* the other preload list's zygote, of a test before */
    for (int i = 0; i < 3; i++) {
        c[i] = (struct churn){.stop = &stop, .total = &total};
        assert_int_equal(pthread_create(&c[i].thread, NULL, churn_main, &c[i]), 0);
    }
    /* The bound only catches a hang: a loaded machine started 29
     * sessions in 30 s, too few for four kills six sessions apart. */
    for (int64_t end = h_now_ms() + 120000; kills < 4 && h_now_ms() < end;) {
        usleep(100000 + (unsigned)(rand() % 100000));
        /* Each successor serves a few sessions first: a start whose
         * zygote died is retried once, with a new one, and this must
         * not kill that one too. */
        if (zygotes(z, 4) == 1 && z[0] != last && atomic_load(&total) >= at_kill + 6 &&
            serving(z[0]) && kill(z[0], SIGKILL) == 0) {
            last = z[0];
            at_kill = atomic_load(&total);
            kills++;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(c[i].thread, NULL), 0);
        started += c[i].started;
        failed += c[i].failed;
    }
    fprintf(stderr, "  %d sessions started, the zygote killed %d times\n", started, kills);
    assert_int_equal(failed, 0);
    assert_int_equal(kills, 4);
    ci_zygote_stop_all();
    for (int i = 0; i < 250 && h_children(getpid(), &zombies, 0) > 0; i++)
        usleep(20000);
    assert_int_equal(h_children(getpid(), &zombies, 1), 0);
}

/* The body of the host below: one session, one cell, the PID namespace
 * if @pidns; 0 if all went well. */
static int host_in_a_pid_namespace(int pidns)
{
    ci_session *s = NULL;
    ci_result *r = NULL;
    int ok = ci_session_new(&s, NULL) == CI_OK && ci_run(s, "6 * 7", &r) == CI_OK &&
             ci_result_status(r) == CI_STATUS_OK && ci_result_value(r) &&
             strcmp(ci_result_value(r), "42") == 0 &&
             !!(ci_session_sandbox(s) & CI_SANDBOX_PIDNS) == pidns;
    if (!ok)
        fprintf(stderr, "host in a PID namespace: %s\n", s ? ci_session_errmsg(s) : ci_session_errmsg(NULL));
    ci_result_free(r);
    ci_session_free(s);
    return ok ? 0 : 1;
}

static void test_a_host_in_a_pid_namespace_of_its_own_starts_sessions(void **state)
{
    /* A host that is pid 1 of a PID namespace, with the machine's /proc
     * (which counts pids in another namespace): a worker checks its
     * parent through a pidfd, not through /proc. Run first, before this
     * process has any thread of the library's to copy into a fork. Its
     * worker has a PID namespace where the kernel gives one (probed). */
    int pidns = (h_probe(1)->layers & CI_SANDBOX_PIDNS) != 0;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t outer = fork();
    assert_true(outer >= 0);
    if (outer == 0) {
        char rc = 3;
        close(fds[0]);
        if (unshare(CLONE_NEWPID) != 0) {
            rc = 2; /* not ours to make: skipped */
        } else {
            pid_t host = fork();
            int st;
            if (host == 0)
                _exit(host_in_a_pid_namespace(pidns));
            if (host > 0 && waitpid(host, &st, 0) == host && WIFEXITED(st))
                rc = (char)WEXITSTATUS(st);
        }
        _exit(write(fds[1], &rc, 1) == 1 ? 0 : 4);
    }
    close(fds[1]);
    char rc = 5;
    assert_int_equal(read(fds[0], &rc, 1), 1);
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(outer, &st, 0), outer);
    if (rc == 2) {
        h_skip_because("this process may not make a PID namespace (unshare(CLONE_NEWPID) "
                       "refused)");
    }
    assert_int_equal(rc, 0);
}

static void test_stopping_the_zygotes_leaves_nothing(void **state)
{
    ci_session *s = h_session(NULL);
    int z[4], zombies = 0;
    assert_true(zygotes(z, 4) >= 1);
    ci_zygote_stop_all();
    assert_int_equal(zygotes(z, 4), 0);
    /* Its session lives on, and the next one starts a zygote again. */
    h_expect(s, "6 * 7", "42", "");
    ci_session_free(s);
    s = h_session(NULL);
    assert_int_equal(zygotes(z, 4), 1);
    ci_session_free(s);
    ci_zygote_stop_all();
    for (int i = 0; i < 250 && h_children(getpid(), &zombies, 0) > 0; i++)
        usleep(20000);
    assert_int_equal(h_children(getpid(), &zombies, 1), 0);
}

int main(void)
{
    h_watchdog(200);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_host_in_a_pid_namespace_of_its_own_starts_sessions),
        cmocka_unit_test(test_sessions_of_one_zygote_are_separate_processes),
        cmocka_unit_test(test_each_session_draws_its_own_random_numbers),
        cmocka_unit_test(test_each_session_has_its_own_directories_and_settings),
        cmocka_unit_test(test_sessions_cannot_signal_each_other_or_the_zygote),
        cmocka_unit_test(test_a_new_session_starts_with_an_empty_namespace),
        cmocka_unit_test(test_the_zygote_keeps_one_capability_in_namespaces_of_its_own),
        cmocka_unit_test(test_a_workspace_root_through_a_link_is_resolved),
        cmocka_unit_test(test_a_root_the_zygote_cannot_see_starts_its_worker_by_exec),
        cmocka_unit_test(test_a_workspace_root_under_usr_is_refused),
        cmocka_unit_test(test_dead_spares_are_passed_over_and_the_zygote_kept),
        cmocka_unit_test(test_a_killed_zygote_is_replaced_and_its_sessions_live_on),
        cmocka_unit_test(test_zygote_children_share_its_hash_seed_and_exec_workers_do_not),
        cmocka_unit_test(test_requiring_a_pid_namespace_without_the_zygote_fails_at_once),
        cmocka_unit_test(test_preload_list_gets_its_own_zygote),
        cmocka_unit_test(test_a_session_finds_nothing_of_the_one_before_in_its_memory),
        cmocka_unit_test(test_killing_the_zygote_while_sessions_start_fails_none),
        cmocka_unit_test(test_stopping_the_zygotes_leaves_nothing),
    };
    return cmocka_run_group_tests_name("zygote", tests, NULL, NULL);
}
