/*
 * Exhausting the machine from a cell: processes, threads (bounded by the
 * task limit), memory, CPU in
 * Python and in C, output, disk space (blocks allocated past the size
 * too) and inodes (bounded by the disk and inode quotas), directory depth,
 * descriptors. Each must end with a clear status within the limits, and
 * leave the host as it was: no new process, its own memory and threads
 * unchanged, the session usable or restartable, the session directory
 * removed in full when the session is freed. The sessions' limits are
 * small: 512 MiB of memory, 64 KiB of output, 4 MiB files, a 0.5 s grace,
 * and a 3 s timeout, or 1 s for the session Q that runs the endless loops.
 */
#include <pthread.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include "attack.h"

#define TIMEOUT_MS 3000
#define LOOP_TIMEOUT_MS 1000
#define GRACE_MS 500
#define MEMORY (512ull << 20)
#define OUTPUT (64 * 1024)
#define FILE_LIMIT (4ull << 20)
/* ci_run promises timeout + grace + 100 ms; the margin is for a loaded
 * machine. */
#define SLACK_MS 1500

static ci_session *S, *Q;
static char *root; /* workspace root, test-owned */
static const struct h_limits *limits;

static int group_setup(void **state)
{
    root = a_tmpdir(0755);
    static struct h_limits lim = {.timeout_ms = TIMEOUT_MS, .grace_ms = GRACE_MS,
                                  .memory = MEMORY, .output = OUTPUT, .file = FILE_LIMIT};
    lim.root = root;
    limits = &lim;
    struct h_limits qlim = lim;
    qlim.timeout_ms = LOOP_TIMEOUT_MS;
    if (a_group_session(&S, &lim) != 0 || !(Q = a_session_new(&qlim)))
        return -1;
    return 0;
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    ci_session_free(Q);
    h_rmtree(root);
    free(root);
    return 0;
}

/* Runs @code on @s (of timeout @timeout_ms), asserts ci_run came back
 * within the deadline; returns the result. */
static ci_result *run_on(ci_session *s, unsigned timeout_ms, const char *code)
{
    int64_t t0 = h_now_ms();
    ci_result *r = h_run(s, code);
    int64_t took = h_now_ms() - t0;
    if (took > timeout_ms + GRACE_MS + SLACK_MS) {
        h_dump(r);
        fail_msg("ATTACK SUCCEEDED: ci_run held the host for %lld ms, over timeout %u + grace %d",
                 (long long)took, timeout_ms, GRACE_MS);
    }
    return r;
}

static ci_result *run_timed(const char *code)
{
    return run_on(S, TIMEOUT_MS, code);
}

/* The endless loops, on Q. */
static ci_result *run_loop(const char *code)
{
    return run_on(Q, LOOP_TIMEOUT_MS, code);
}

/* Asserts @r has status @st and error name @name. */
static void assert_fate(ci_result *r, ci_status st, const char *name)
{
    const char *n = ci_result_error_name(r);
    if (ci_result_status(r) != st || !n || strcmp(n, name) != 0) {
        h_dump(r);
        fail_msg("status %s %s, expected %s %s", h_status_name(ci_result_status(r)),
                 n ? n : "(none)", h_status_name(st), name);
    }
}

/* The value of @key (in kB) in /proc/@pid/status; -1 if none. */
static long status_kb(int pid, const char *key)
{
    char *p = h_fmt("/proc/%d/status", pid);
    char *st = h_read_file(p, NULL);
    char *want = h_fmt("\n%s:", key);
    char *at = st ? strstr(st, want) : NULL;
    long v = at ? strtol(at + strlen(want), NULL, 10) : -1;
    free(want);
    free(st);
    free(p);
    return v;
}

/* Asserts the worker @pid has gone (or is a zombie about to be reaped). */
static void assert_gone(int pid)
{
    char st;
    int ppid, sid;
    for (int i = 0; i < 50 && h_proc_stat(pid, &st, &ppid, &sid) && st != 'Z'; i++)
        usleep(20 * 1000);
    if (h_proc_stat(pid, &st, &ppid, &sid) && st != 'Z')
        fail_msg("ATTACK SUCCEEDED: worker %d is still running (state %c) after it was killed",
                 pid, st);
}

/* -------------------------------------------------------------- processes */

static void test_fork_bomb(void **state)
{
    int pid = ci_session_pid(S);
    a_stopped(S, "import os\nwhile True:\n    os.fork()", A_OSERR);
    a_assert_no_process(S, pid, NULL);
}

static void test_thread_bomb(void **state)
{
    /* Threads that never end, until the worker cannot make more. */
    int pid = ci_session_pid(S);
    long host_threads = a_self_status("Threads");
    char *cell = h_cell("resources_thread_bomb");
    ci_result *r = run_timed(cell);
    free(cell);
    ci_status st = ci_result_status(r);
    const char *n = ci_result_error_name(r);
    int clear = (st == CI_STATUS_ERROR && n && strcmp(n, "RuntimeError") == 0) ||
                (st == CI_STATUS_MEMORY && n && strcmp(n, "MemoryError") == 0) ||
                st == CI_STATUS_TIMEOUT ||
                (st == CI_STATUS_KILLED && n && strcmp(n, "TimeoutError") == 0);
    if (!clear) {
        h_dump(r);
        fail_msg("the thread bomb ended with %s %s", h_status_name(st), n ? n : "(none)");
    }
    ci_result_free(r);
    a_assert_no_process(S, pid, NULL);
    assert_int_equal(a_self_status("Threads"), host_threads);
    /* The worker is full of sleeping threads: a restart clears it. */
    assert_int_equal(ci_session_restart(S), CI_OK);
    a_assert_filtered(S);
    assert_gone(pid);
    h_expect(S, "'fresh'", "'fresh'", NULL);
}

static void *host_idle(void *arg)
{
    return arg;
}

/* The host starts @n threads and joins them: 0, or the first error. */
static int host_threads_start(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        int rc = pthread_create(&t, NULL, host_idle, NULL);
        if (rc)
            return rc;
        pthread_join(t, NULL);
    }
    return 0;
}

static void test_thread_bomb_stops_at_the_task_limit(void **state)
{
    /* Threads of the smallest stack, so that memory is not what stops
     * them: without the task limit 21609 started in 16 s here, most of
     * the machine's 32768 pids, before RLIMIT_AS did. */
    if (!(h_layers_of(S, CI_SANDBOX_TASK_LIMIT) & CI_SANDBOX_TASK_LIMIT))
        h_skip_because("the task limit needs the user namespace, which this kernel or "
                       "container refuses (probed)");
    int pid = ci_session_pid(S);
    char *cell = h_cell("resources_threads_until_task_limit");
    ci_result *r = run_timed(cell);
    free(cell);
    const char *v = ci_result_value(r);
    long started = v ? strtol(v, NULL, 10) : -1;
    if (ci_result_status(r) != CI_STATUS_OK || !strstr(ci_result_stdout(r, NULL),
                                                        "can't start new thread")) {
        h_dump(r);
        fail_msg("the thread bomb did not end with RuntimeError at the task limit");
    }
    ci_result_free(r);
    /* The default 256 holds the worker's own threads too. */
    if (started < 200 || started > 256)
        fail_msg("ATTACK SUCCEEDED: the cell started %ld threads under a task limit of 256",
                 started);
    /* While they live, from outside: the host makes threads and processes,
     * and a new session starts and makes threads of its own. */
    assert_int_equal(host_threads_start(64), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    ci_session *other = a_session_new(limits);
    if (!other)
        fail_msg("ATTACK SUCCEEDED: no session starts while the thread bomb's threads live");
    h_expect_cell(other, "resources_threads_in_another_session", "100", NULL);
    ci_session_free(other);
    a_assert_continues(S, pid);
    assert_int_equal(ci_session_restart(S), CI_OK);
    a_assert_filtered(S);
    assert_gone(pid);
}

static void test_raw_clone_threads_stop_at_the_task_limit(void **state)
{
    /* Threads made by clone(2) itself, with pthread_create's flags (the
     * ones the filter allows) and a stack of one word: the return
     * address of sleep(), which the child enters with the flags still in
     * its first argument register and sleeps in. Nothing of them is in
     * RLIMIT_AS: with the limit raised to 65536, 2000 started in 0.05 s. */
    if (!(h_layers_of(S, CI_SANDBOX_TASK_LIMIT) & CI_SANDBOX_TASK_LIMIT))
        h_skip_because("the task limit needs the user namespace, which this kernel or "
                       "container refuses (probed)");
    char *cell = h_cell("resources_clone_until_task_limit");
    a_cell = h_fmt("SYS_CLONE = %d\n%s", SYS_clone, cell);
    free(cell);
    ci_result *r = run_timed(a_cell);
    const char *v = ci_result_value(r);
    long started = -1;
    int err = 0;
    if (ci_result_status(r) != CI_STATUS_OK || !v || sscanf(v, "(%ld, %d)", &started, &err) != 2) {
        h_dump(r);
        fail_msg("the raw clone bomb did not end with an error");
    }
    ci_result_free(r);
    if (started > 256 || err != EAGAIN)
        fail_msg("ATTACK SUCCEEDED: the cell made %ld raw threads (then errno %d) under a task "
                 "limit of 256", started, err);
    assert_int_equal(host_threads_start(64), 0);
    ci_session *other = a_session_new(limits);
    if (!other)
        fail_msg("ATTACK SUCCEEDED: no session starts while the raw threads live");
    h_expect_cell(other, "resources_one_thread_in_another_session", "1", NULL);
    ci_session_free(other);
    int pid = ci_session_pid(S);
    assert_int_equal(ci_session_restart(S), CI_OK);
    a_assert_filtered(S);
    assert_gone(pid);
}

/* ----------------------------------------------------------------- memory */

static void test_bytearray_bomb(void **state)
{
    int pid = ci_session_pid(S);
    ci_result *r = run_timed("b = bytearray(8 * 2**30)");
    assert_fate(r, CI_STATUS_MEMORY, "MemoryError");
    ci_result_free(r);
    a_assert_continues(S, pid);
}

static void test_numpy_bomb_touching_its_pages(void **state)
{
    /* 128 MiB arrays of ones, every page written, until the limit. */
    int pid = ci_session_pid(S);
    long host_rss = a_self_status("VmRSS");
    char *cell = h_cell("resources_memory_bomb");
    ci_result *r = run_timed(cell);
    free(cell);
    assert_fate(r, CI_STATUS_MEMORY, "MemoryError");
    ci_result_free(r);
    long peak = status_kb(pid, "VmPeak");
    if (peak > (long)(MEMORY / 1024))
        fail_msg("ATTACK SUCCEEDED: worker address space peaked at %ld kB, over the limit", peak);
    if (a_self_status("VmRSS") > host_rss + 64 * 1024)
        fail_msg("the host grew from %ld to %ld kB", host_rss, a_self_status("VmRSS"));
    a_assert_continues(S, pid);
    h_expect(S, "n > 0", "True", NULL);
}

static void test_anonymous_mmap_of_a_terabyte(void **state)
{
    int pid = ci_session_pid(S);
    ci_result *r = run_timed("import mmap\nm = mmap.mmap(-1, 2**40)");
    const char *n = ci_result_error_name(r);
    if (!((ci_result_status(r) == CI_STATUS_ERROR && n && strcmp(n, "OSError") == 0) ||
          (ci_result_status(r) == CI_STATUS_MEMORY && n && strcmp(n, "MemoryError") == 0))) {
        h_dump(r);
        fail_msg("a terabyte mapping ended with %s %s", h_status_name(ci_result_status(r)),
                 n ? n : "(none)");
    }
    ci_result_free(r);
    a_assert_continues(S, pid);
}

/* -------------------------------------------------------------------- CPU */

static void test_endless_python_loop(void **state)
{
    int pid = ci_session_pid(Q);
    h_expect(Q, "kept = 'state'", NULL, NULL);
    ci_result *r = run_loop("while True:\n    pass");
    assert_fate(r, CI_STATUS_TIMEOUT, "TimeoutError");
    ci_result_free(r);
    a_assert_continues(Q, pid);
    h_expect(Q, "kept", "'state'", NULL);
}

static void test_catastrophic_regex(void **state)
{
    /* Python 3.11's regex engine checks for signals: a timeout, not a
     * kill. */
    int pid = ci_session_pid(Q);
    ci_result *r = run_loop("import re\nre.match(r'(a|aa)+$', 'a' * 64 + 'b')");
    assert_fate(r, CI_STATUS_TIMEOUT, "TimeoutError");
    ci_result_free(r);
    a_assert_continues(Q, pid);
}

static void test_endless_loop_in_c(void **state)
{
    /* Draining an endless iterator never returns to the eval loop: the
     * interrupt is not seen, and the grace period ends it. */
    int pid = ci_session_pid(Q);
    ci_result *r = run_loop("import collections, itertools\n"
                             "collections.deque(itertools.count(), maxlen=0)");
    assert_fate(r, CI_STATUS_KILLED, "TimeoutError");
    ci_result_free(r);
    assert_int_equal(ci_session_pid(Q), -1);
    assert_gone(pid);
    a_alive(Q);
}

/* ----------------------------------------------------------------- output */

static void test_a_gigabyte_of_output(void **state)
{
    long host_hwm = a_self_status("VmHWM");
    char *cell = h_cell("resources_a_gigabyte_of_output");
    ci_result *r = run_timed(cell);
    free(cell);
    ci_status st = ci_result_status(r);
    if (st != CI_STATUS_OK && st != CI_STATUS_TIMEOUT) {
        h_dump(r);
        fail_msg("a gigabyte of output ended with %s", h_status_name(st));
    }
    h_assert_cut(r, CI_STREAM_STDOUT, OUTPUT);
    ci_result_free(r);
    if (a_self_status("VmHWM") > host_hwm + 64 * 1024)
        fail_msg("ATTACK SUCCEEDED: the host's memory peaked at %ld kB (from %ld kB)",
                 a_self_status("VmHWM"), host_hwm);
    h_expect(S, "'after the flood'", "'after the flood'", NULL);
}

/* ------------------------------------------------------------------- disk */

static void test_filling_the_disk_is_bounded_per_file(void **state)
{
    /* 16 files at the 4 MiB limit (64 MiB in all), then one over it. */
    struct statvfs before;
    assert_int_equal(statvfs(root, &before), 0);
    int pid = ci_session_pid(S);
    char *cell = h_cell("resources_file_size_fill");
    ci_result *r = run_timed(cell);
    free(cell);
    assert_fate(r, CI_STATUS_ERROR, "OSError");
    h_assert_contains(ci_result_error_value(r), "file size limit of 4 MiB"); /* EFBIG */
    ci_result_free(r);
    char *over = h_fmt("%s/over", ci_session_workspace(S));
    struct stat st;
    assert_int_equal(stat(over, &st), 0);
    assert_true((unsigned long long)st.st_size <= FILE_LIMIT);
    free(over);
    a_assert_continues(S, pid);
    h_expect(S, "import glob, os\nfor f in glob.glob('fill*') + ['over']:\n    os.unlink(f)", NULL,
             NULL);
}

static void test_sparse_file_of_a_terabyte(void **state)
{
    int pid = ci_session_pid(S);
    ci_result *r = run_timed("import os\nopen('sparse', 'wb').close()\nos.truncate('sparse', 2**40)");
    assert_fate(r, CI_STATUS_ERROR, "OSError");
    h_assert_contains(ci_result_error_value(r), "file size limit of 4 MiB");
    ci_result_free(r);
    char *p = h_fmt("%s/sparse", ci_session_workspace(S));
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 0);
    free(p);
    a_assert_continues(S, pid);
}

static void test_fallocate_past_the_size_stays_under_the_file_limit(void **state)
{
    /* FALLOC_FL_KEEP_SIZE allocates blocks past the size, where
     * RLIMIT_FSIZE never looks: 225 MiB under a 4 MiB limit, were it let
     * through. Mode 0 (os.posix_fallocate) extends the size and meets the
     * limit; punching a hole only frees. */
    int pid = ci_session_pid(S);
    char *tail = h_fmt("fd = os.open('blocks', os.O_CREAT | os.O_RDWR, 0o600)\n"
                       "sc(%d, fd, 1, 0, 225 << 20)  # FALLOC_FL_KEEP_SIZE\n",
                       SYS_fallocate);
    a_cell = h_cell_then("sc", tail);
    free(tail);
    a_stopped(S, a_cell, "PermissionError");
    char *cell = h_cell("resources_fallocate_over_the_limit");
    ci_result *r = run_timed(cell);
    free(cell);
    assert_fate(r, CI_STATUS_ERROR, "OSError");
    h_assert_contains(ci_result_error_value(r), "file size limit of 4 MiB"); /* EFBIG */
    ci_result_free(r);
    char *p = h_fmt("%s/blocks", ci_session_workspace(S));
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    if ((unsigned long long)st.st_blocks * 512 > FILE_LIMIT || st.st_size != 0)
        fail_msg("ATTACK SUCCEEDED: %s has %lld bytes of blocks and size %lld, over the %llu "
                 "limit", p, (long long)st.st_blocks * 512, (long long)st.st_size, FILE_LIMIT);
    /* Within the limit both work, and the hole frees what was taken. */
    free(a_cell);
    cell = h_cell("resources_punch_hole");
    tail = h_fmt("SYS_FALLOCATE = %d\n%s", SYS_fallocate, cell);
    free(cell);
    a_cell = h_cell_then("sc", tail);
    free(tail);
    h_expect(S, a_cell, "(True, True, 1048576)", NULL);
    free(p);
    a_assert_continues(S, pid);
}

/* The session of the quota tests, of an 8 MiB and 256-inode quota: freed
 * by their teardown too, should a test fail half-way. */
static ci_session *quota_session;

static int quota_teardown(void **state)
{
    ci_session_free(quota_session);
    quota_session = NULL;
    return 0;
}

/* The quota session under the group's root, or a skip where this host
 * may not mount its tmpfs (the probe agreeing). */
static ci_session *quota_session_new(void)
{
    ci_config *cfg = h_config(limits);
    assert_int_equal(ci_config_set_disk_quota(cfg, 8ull << 20), CI_OK);
    assert_int_equal(ci_config_set_inode_quota(cfg, 256), CI_OK);
    assert_int_equal(ci_session_new(&quota_session, cfg), CI_OK);
    ci_config_free(cfg);
    a_assert_filtered(quota_session);
    if (!(h_layers_of(quota_session, CI_SANDBOX_DISK_QUOTA) & CI_SANDBOX_DISK_QUOTA))
        h_skip_because("the disk quota needs a host that may mount a tmpfs (root), which this "
                       "one may not (probed)");
    return quota_session;
}

/* From outside a full session: the host writes on the workspace root's
 * filesystem, and the group's session writes, by a cell and by put. */
static void assert_others_write(const char *what)
{
    char *f = h_fmt("%s/host-writes-%s", root, what);
    h_write_file(f, "host", 4);
    assert_int_equal(unlink(f), 0);
    free(f);
    h_expect(S, "open('after-the-filler', 'wb').write(bytes(1 << 20))", "1048576", NULL);
    assert_int_equal(ci_session_put_file(S, "put-after-the-filler", "x", 1), CI_OK);
    h_expect(S, "import os\nos.unlink('after-the-filler')\nos.unlink('put-after-the-filler')",
             NULL, NULL);
}

static void test_filling_the_disk_quota(void **state)
{
    /* Without the quota, files of the file limit each fill the host's
     * filesystem under the workspace root. */
    ci_session *q = quota_session_new();
    int pid = ci_session_pid(q);
    char *cell = h_cell("resources_disk_quota_fill");
    ci_result *r = h_run(q, cell);
    free(cell);
    assert_fate(r, CI_STATUS_ERROR, "OSError");
    h_assert_contains(ci_result_error_value(r), "disk quota of 8 MiB is full");
    ci_result_free(r);
    /* The host's put into it fails with the quota named, nothing left. */
    static char block[1 << 20];
    assert_int_equal(ci_session_put_file(q, "put.bin", block, sizeof block), CI_ETOOBIG);
    h_assert_contains(ci_session_errmsg(q), "disk quota of 8 MiB is full");
    assert_others_write("disk");
    /* Its own files go, and it writes again. */
    a_assert_continues(q, pid);
    h_expect_cell(q, "resources_quota_files_removed", "1048576", NULL);
    assert_int_equal(ci_session_put_file(q, "put.bin", block, sizeof block), CI_OK);
}

static void test_filling_the_inode_quota(void **state)
{
    /* Empty files: without the quota they use up the inodes of the
     * workspace root's filesystem, and the host's next upload fails. */
    ci_session *q = quota_session_new();
    int pid = ci_session_pid(q);
    char *cell = h_cell("resources_inode_quota_fill");
    ci_result *r = h_run(q, cell);
    free(cell);
    assert_fate(r, CI_STATUS_ERROR, "OSError");
    h_assert_contains(ci_result_error_value(r), "inode quota of 256 files is full");
    ci_result_free(r);
    assert_int_equal(ci_session_put_file(q, "one-more", "x", 1), CI_ETOOBIG);
    h_assert_contains(ci_session_errmsg(q), "inode quota of 256 files is full");
    assert_others_write("inodes");
    a_assert_continues(q, pid);
    /* The quota survives a restart, and so do the files in it; freed, it
     * leaves no mount behind. */
    char *dir = h_fmt("%s", ci_session_workspace(q));
    int rc = ci_session_restart(q);
    if (rc != CI_OK)
        fail_msg("restart of the full session: %s", ci_session_errmsg(q));
    h_expect(q, "import os\nlen(os.listdir('many')) > 200", "True", NULL);
    assert_true(ci_session_sandbox(q) & CI_SANDBOX_DISK_QUOTA);
    ci_session_free(quota_session);
    quota_session = NULL;
    char *mounts = h_read_file("/proc/self/mountinfo", NULL);
    *strrchr(dir, '/') = '\0';
    if (strstr(mounts, dir))
        fail_msg("ATTACK SUCCEEDED: the session's tmpfs %s is still mounted after free", dir);
    struct stat st;
    assert_int_equal(stat(dir, &st), -1);
    free(mounts);
    free(dir);
}

/* The session of the inode test and its root: freed by its teardown too,
 * should the test fail half-way. */
static ci_session *inode_session;
static char *inode_root;

static int inode_teardown(void **state)
{
    ci_session_free(inode_session);
    inode_session = NULL;
    h_rmtree(inode_root);
    free(inode_root);
    inode_root = NULL;
    return 0;
}

static void test_inodes_and_depth_are_removed_with_the_session(void **state)
{
    /* A session of its own under a root of its own: 1000 empty files and
     * a directory chain far deeper than PATH_MAX, all gone after free. */
    inode_root = a_tmpdir(0755);
    struct h_limits lim = *limits;
    lim.root = inode_root;
    lim.timeout_ms = 60000; /* a hang bound: a loaded disk took over 3 s */
    if (!(inode_session = a_session_new(&lim)))
        fail_msg("cannot start the session");
    char *cell = h_cell("resources_many_inodes_and_depth");
    ci_result *r = h_run(inode_session, cell);
    free(cell);
    const char *v = ci_result_value(r);
    if (ci_result_status(r) != CI_STATUS_OK || !v || strcmp(v, "'made'") != 0) {
        h_dump(r);
        fail_msg("the cell could not make its files");
    }
    ci_result_free(r);
    h_expect(inode_session, "'still here'", "'still here'", NULL);
    ci_session_free(inode_session);
    inode_session = NULL;
    DIR *d = opendir(inode_root);
    assert_non_null(d);
    struct dirent *e;
    int left = 0;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            left++;
    closedir(d);
    if (left)
        fail_msg("ATTACK SUCCEEDED: %d entries left in the workspace root after free", left);
}

static void test_descriptor_exhaustion(void **state)
{
    int pid = ci_session_pid(S);
    char *cell = h_cell("resources_descriptor_hoard");
    ci_result *r = run_timed(cell);
    free(cell);
    assert_fate(r, CI_STATUS_ERROR, "OSError");
    h_assert_contains(ci_result_error_value(r), "[Errno 24]"); /* EMFILE */
    ci_result_free(r);
    a_assert_continues(S, pid);
    h_expect(S, "import gc\ngc.collect()\nopen('/dev/null').close()", NULL, NULL);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    const struct CMUnitTest tests[] = {
        A_TEST(test_fork_bomb),
        A_TEST(test_bytearray_bomb),
        A_TEST(test_numpy_bomb_touching_its_pages),
        A_TEST(test_anonymous_mmap_of_a_terabyte),
        A_TEST(test_descriptor_exhaustion),
        A_TEST(test_filling_the_disk_is_bounded_per_file),
        A_TEST(test_sparse_file_of_a_terabyte),
        A_TEST(test_fallocate_past_the_size_stays_under_the_file_limit),
        cmocka_unit_test_setup_teardown(test_filling_the_disk_quota, a_setup_alive,
                                        quota_teardown),
        cmocka_unit_test_setup_teardown(test_filling_the_inode_quota, a_setup_alive,
                                        quota_teardown),
        A_TEST(test_a_gigabyte_of_output),
        A_TEST(test_endless_python_loop),
        A_TEST(test_catastrophic_regex),
        A_TEST(test_endless_loop_in_c),
        A_TEST(test_thread_bomb),
        A_TEST(test_thread_bomb_stops_at_the_task_limit),
        A_TEST(test_raw_clone_threads_stop_at_the_task_limit),
        cmocka_unit_test_setup_teardown(test_inodes_and_depth_are_removed_with_the_session,
                                        a_setup_alive, inode_teardown),
    };
    return cmocka_run_group_tests_name("attacks: resources", tests, group_setup,
                                       group_teardown);
}
