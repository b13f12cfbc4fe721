/*
 * The API's edges: NULL arguments, config bounds, error codes and
 * messages, and what a failed ci_session_new leaves behind.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

/* ------------------------------------------------------------ NULL args */

static void test_free_functions_accept_null(void **state)
{
    ci_config_free(NULL);
    ci_session_free(NULL);
    ci_result_free(NULL);
    ci_free(NULL);
}

static void test_result_getters_on_null(void **state)
{
    size_t len = 99;
    assert_int_equal(ci_result_status(NULL), CI_STATUS_KILLED);
    assert_null(ci_result_stdout(NULL, &len));
    assert_null(ci_result_stderr(NULL, &len));
    assert_null(ci_result_stdout(NULL, NULL));
    assert_int_equal(ci_result_truncated(NULL), 0);
    assert_null(ci_result_value(NULL));
    assert_null(ci_result_error_name(NULL));
    assert_null(ci_result_error_value(NULL));
    assert_null(ci_result_traceback(NULL));
    assert_null(ci_result_traceback_full(NULL));
    assert_int_equal(ci_result_execution_count(NULL), 0);
}

static void test_session_getters_on_null(void **state)
{
    assert_null(ci_session_workspace(NULL));
    assert_int_equal(ci_session_pid(NULL), -1);
    assert_int_equal(ci_session_sandbox(NULL), 0);
    assert_int_equal(ci_session_restart(NULL), CI_EINVAL);
}

static void test_run_on_null_session_is_einval(void **state)
{
    ci_result *r = (ci_result *)&r;
    assert_int_equal(ci_run(NULL, "1", &r), CI_EINVAL);
    assert_null(r);
}

static void test_files_on_null_session_are_einval(void **state)
{
    void *data = &data;
    size_t len = 99;
    assert_int_equal(ci_session_put_file(NULL, "a", "x", 1), CI_EINVAL);
    assert_int_equal(ci_session_get_file(NULL, "a", &data, &len), CI_EINVAL);
    assert_null(data);
    assert_int_equal(len, 0);
}

static void test_session_new_with_null_out_is_einval(void **state)
{
    assert_int_equal(ci_session_new(NULL, NULL), CI_EINVAL);
}

/* --------------------------------------------------------------- config */

static void test_config_new_gives_config(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_non_null(cfg);
    ci_config_free(cfg);
}

static void test_config_setters_reject_null_config(void **state)
{
    assert_int_equal(ci_config_set_timeout_ms(NULL, 1000), CI_EINVAL);
    assert_int_equal(ci_config_set_grace_ms(NULL, 1000), CI_EINVAL);
    assert_int_equal(ci_config_set_startup_timeout_ms(NULL, 1000), CI_EINVAL);
    assert_int_equal(ci_config_set_memory_limit(NULL, 1ull << 30), CI_EINVAL);
    assert_int_equal(ci_config_set_output_limit(NULL, 4096), CI_EINVAL);
    assert_int_equal(ci_config_set_file_limit(NULL, 4096), CI_EINVAL);
    assert_int_equal(ci_config_set_task_limit(NULL, 256), CI_EINVAL);
    assert_int_equal(ci_config_set_disk_quota(NULL, 1ull << 30), CI_EINVAL);
    assert_int_equal(ci_config_set_inode_quota(NULL, 1000), CI_EINVAL);
    assert_int_equal(ci_config_set_workspace_root(NULL, "/tmp"), CI_EINVAL);
}

static void test_timeout_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_timeout_ms(cfg, 0), CI_EINVAL);
    assert_int_equal(ci_config_set_timeout_ms(cfg, 86400001ul), CI_EINVAL);
    assert_int_equal(ci_config_set_timeout_ms(cfg, ULONG_MAX), CI_EINVAL);
    assert_int_equal(ci_config_set_timeout_ms(cfg, 1), CI_OK);
    assert_int_equal(ci_config_set_timeout_ms(cfg, 86400000ul), CI_OK);
    ci_config_free(cfg);
}

static void test_grace_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_grace_ms(cfg, 0), CI_EINVAL);
    assert_int_equal(ci_config_set_grace_ms(cfg, 600001ul), CI_EINVAL);
    assert_int_equal(ci_config_set_grace_ms(cfg, 1), CI_OK);
    assert_int_equal(ci_config_set_grace_ms(cfg, 600000ul), CI_OK);
    ci_config_free(cfg);
}

static void test_startup_timeout_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_startup_timeout_ms(cfg, 0), CI_EINVAL);
    assert_int_equal(ci_config_set_startup_timeout_ms(cfg, 600001ul), CI_EINVAL);
    assert_int_equal(ci_config_set_startup_timeout_ms(cfg, 1), CI_OK);
    assert_int_equal(ci_config_set_startup_timeout_ms(cfg, 600000ul), CI_OK);
    ci_config_free(cfg);
}

static void test_memory_limit_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_memory_limit(cfg, 0), CI_EINVAL);
    assert_int_equal(ci_config_set_memory_limit(cfg, (512ull << 20) - 1), CI_EINVAL);
    assert_int_equal(ci_config_set_memory_limit(cfg, 512ull << 20), CI_OK);
    assert_int_equal(ci_config_set_memory_limit(cfg, 64ull << 30), CI_OK);
    ci_config_free(cfg);
}

static void test_output_limit_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_output_limit(cfg, 0), CI_EINVAL);
    assert_int_equal(ci_config_set_output_limit(cfg, 1023), CI_EINVAL);
    assert_int_equal(ci_config_set_output_limit(cfg, (256u << 20) + 1), CI_EINVAL);
    assert_int_equal(ci_config_set_output_limit(cfg, 1024), CI_OK);
    assert_int_equal(ci_config_set_output_limit(cfg, 256u << 20), CI_OK);
    ci_config_free(cfg);
}

static void test_file_limit_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_file_limit(cfg, 0), CI_EINVAL);
    assert_int_equal(ci_config_set_file_limit(cfg, 1), CI_OK);
    assert_int_equal(ci_config_set_file_limit(cfg, 1ull << 40), CI_OK);
    ci_config_free(cfg);
}

static void test_task_limit_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_task_limit(cfg, 15), CI_EINVAL);
    assert_int_equal(ci_config_set_task_limit(cfg, 16), CI_OK);
    assert_int_equal(ci_config_set_task_limit(cfg, 65536), CI_OK);
    assert_int_equal(ci_config_set_task_limit(cfg, 65537), CI_EINVAL);
    ci_config_free(cfg);
}

static void test_quota_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_disk_quota(cfg, 0), CI_OK); /* none */
    assert_int_equal(ci_config_set_disk_quota(cfg, (1u << 20) - 1), CI_EINVAL);
    assert_int_equal(ci_config_set_disk_quota(cfg, 1u << 20), CI_OK);
    assert_int_equal(ci_config_set_disk_quota(cfg, (1ull << 63) - 1), CI_OK);
    assert_int_equal(ci_config_set_disk_quota(cfg, 1ull << 63), CI_EINVAL);
    assert_int_equal(ci_config_set_inode_quota(cfg, 63), CI_EINVAL);
    assert_int_equal(ci_config_set_inode_quota(cfg, 64), CI_OK);
    assert_int_equal(ci_config_set_inode_quota(cfg, 4294967295ull), CI_OK);
    assert_int_equal(ci_config_set_inode_quota(cfg, 4294967296ull), CI_EINVAL);
    ci_config_free(cfg);
}

static void test_workspace_root_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    char longdir[3002];

    assert_int_equal(ci_config_set_workspace_root(cfg, NULL), CI_EINVAL);
    assert_int_equal(ci_config_set_workspace_root(cfg, ""), CI_EINVAL);
    assert_int_equal(ci_config_set_workspace_root(cfg, "tmp"), CI_EINVAL);
    assert_int_equal(ci_config_set_workspace_root(cfg, "./tmp"), CI_EINVAL);

    /* 3000 bytes is the longest accepted, 3001 is refused. */
    longdir[0] = '/';
    memset(longdir + 1, 'd', sizeof longdir - 2);
    longdir[3001] = '\0';
    assert_int_equal(ci_config_set_workspace_root(cfg, longdir), CI_EINVAL);
    longdir[3000] = '\0';
    assert_int_equal(ci_config_set_workspace_root(cfg, longdir), CI_OK);

    assert_int_equal(ci_config_set_workspace_root(cfg, "/tmp"), CI_OK);
    ci_config_free(cfg);
}

static void test_require_sandbox_bounds(void **state)
{
    ci_config *cfg = ci_config_new();
    const unsigned all = CI_SANDBOX_SECCOMP | CI_SANDBOX_RLIMITS | CI_SANDBOX_NO_NEW_PRIVS |
                         CI_SANDBOX_LANDLOCK | CI_SANDBOX_UNPRIVILEGED | CI_SANDBOX_USERNS |
                         CI_SANDBOX_NETNS | CI_SANDBOX_IPCNS | CI_SANDBOX_UTSNS |
                         CI_SANDBOX_MNTNS | CI_SANDBOX_PIDNS | CI_SANDBOX_TASK_LIMIT |
                         CI_SANDBOX_DISK_QUOTA;

    assert_int_equal(ci_config_require_sandbox(NULL, 0), CI_EINVAL);
    assert_int_equal(ci_config_require_sandbox(cfg, all << 1), CI_EINVAL);
    assert_int_equal(ci_config_require_sandbox(cfg, 0x80000000u), CI_EINVAL);
    assert_int_equal(ci_config_require_sandbox(cfg, all), CI_OK);
    assert_int_equal(ci_config_require_sandbox(cfg, 0), CI_OK);
    ci_config_free(cfg);
}

/* ---------------------------------------------------------------- codes */

#define H_CODE_(name, value, message) {name, #name, message},
static const struct {
    int code;
    const char *name;
    const char *message;
} codes[] = {CI_ERRORS(H_CODE_)};
#undef H_CODE_
#define NCODES (sizeof codes / sizeof codes[0])

static void test_strerror_gives_each_code_its_listed_message(void **state)
{
    assert_int_equal(NCODES, 13);
    for (size_t i = 0; i < NCODES; i++) {
        const char *m = ci_strerror(codes[i].code);
        assert_non_null(m);
        if (strcmp(m, codes[i].message) != 0)
            fail_msg("ci_strerror(%s) = \"%s\", expected \"%s\"", codes[i].name, m,
                     codes[i].message);
    }
}

static void test_strerror_messages_are_distinct_and_not_empty(void **state)
{
    for (size_t i = 0; i < NCODES; i++) {
        const char *a = ci_strerror(codes[i].code);
        assert_true(strlen(a) > 0);
        assert_string_not_equal(a, "unknown error");
        for (size_t j = i + 1; j < NCODES; j++)
            assert_string_not_equal(a, ci_strerror(codes[j].code));
    }
}

static void test_strerror_unknown_codes(void **state)
{
    const int unknown[] = {1, 2, 42, CI_ERROR_LAST_ - 1, -13, -100, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        h_assert_str(ci_strerror(unknown[i]), "unknown error");
}

static void test_status_names_are_the_documented_words(void **state)
{
    h_assert_str(ci_status_name(CI_STATUS_OK), "ok");
    h_assert_str(ci_status_name(CI_STATUS_ERROR), "error");
    h_assert_str(ci_status_name(CI_STATUS_TIMEOUT), "timeout");
    h_assert_str(ci_status_name(CI_STATUS_MEMORY), "memory");
    h_assert_str(ci_status_name(CI_STATUS_KILLED), "killed");
    h_assert_str(ci_status_name(CI_STATUS_INTERRUPTED), "interrupted");
    h_assert_str(ci_status_name((ci_status)(CI_STATUS_INTERRUPTED + 1)), "unknown");
    h_assert_str(ci_status_name((ci_status)-1), "unknown");
}

static void test_error_codes_have_their_documented_values(void **state)
{
    assert_int_equal(CI_OK, 0);
    assert_int_equal(CI_EINVAL, -1);
    assert_int_equal(CI_ENOMEM, -2);
    assert_int_equal(CI_ESPAWN, -3);
    assert_int_equal(CI_EDEAD, -4);
    assert_int_equal(CI_EBUSY, -5);
    assert_int_equal(CI_EPROTO, -6);
    assert_int_equal(CI_EIO, -7);
    assert_int_equal(CI_ENOENT, -8);
    assert_int_equal(CI_ETOOBIG, -9);
    assert_int_equal(CI_EUNSAFE, -10);
    assert_int_equal(CI_ESANDBOX, -11);
    assert_int_equal(CI_EMANIFEST, -12);
    assert_int_equal(CI_ERROR_LAST_, -12);
}

/* ------------------------------------------------- failed ci_session_new */

static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *e;
    int empty = 1;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            fprintf(stderr, "left behind: %s/%s\n", path, e->d_name);
            empty = 0;
        }
    }
    closedir(d);
    return empty;
}

/* No child of ours is left: the library killed and reaped its worker. */
static void assert_no_children(void)
{
    errno = 0;
    pid_t p = waitpid(-1, NULL, WNOHANG);
    if (!(p == -1 && errno == ECHILD))
        fail_msg("a child process is left behind (waitpid gave %d, errno %d)", (int)p,
                 errno);
}

/* Tries ci_session_new with the worker at @worker and a private root;
 * returns the code, checks out is NULL and no directory is left. */
static int new_with_worker(const char *worker, unsigned long startup_ms)
{
    char *root = h_tmpdir();
    struct h_limits lim = {.root = root};
    ci_config *cfg = h_config(&lim);
    if (startup_ms)
        assert_int_equal(ci_config_set_startup_timeout_ms(cfg, startup_ms), CI_OK);
    ci_session *s = (ci_session *)&s;

    assert_int_equal(setenv("CODEINTERP_WORKER", worker, 1), 0);
    int rc = ci_session_new(&s, cfg);
    unsetenv("CODEINTERP_WORKER");
    ci_config_free(cfg);

    assert_null(s);
    assert_true(dir_is_empty(root));
    h_rmtree(root);
    free(root);
    return rc;
}

static void test_missing_worker_gives_espawn_naming_the_path(void **state)
{
    const char *path = "/nonexistent/ci-test/codeinterp-worker";
    assert_int_equal(new_with_worker(path, 0), CI_ESPAWN);
    h_assert_contains(ci_session_errmsg(NULL), path);
    assert_no_children();
}

static void test_worker_that_exits_at_once_gives_espawn(void **state)
{
    assert_int_equal(new_with_worker("/bin/true", 10000), CI_ESPAWN);
    assert_true(strlen(ci_session_errmsg(NULL)) > 0);
    assert_no_children();
}

/* A "worker" script in a test-owned directory. */
static char *make_script(const char *dir, const char *body)
{
    char *path = h_fmt("%s/fake-worker", dir);
    char *text = h_fmt("#!/bin/sh\n%s\n", body);
    h_write_file(path, text, strlen(text));
    assert_int_equal(chmod(path, 0700), 0);
    free(text);
    return path;
}

static void test_worker_never_ready_gives_espawn_at_startup_timeout(void **state)
{
    char *dir = h_tmpdir();
    char *script = make_script(dir, "exec /bin/sleep 60");
    int64_t t0 = h_now_ms();
    assert_int_equal(new_with_worker(script, 500), CI_ESPAWN);
    int64_t took = h_now_ms() - t0;
    if (took > 10000)
        fail_msg("ci_session_new took %lld ms with a 500 ms startup timeout",
                 (long long)took);
    assert_true(strlen(ci_session_errmsg(NULL)) > 0);
    assert_no_children();
    h_rmtree(dir);
    free(script);
    free(dir);
}

static void test_malformed_first_message_gives_eproto(void **state)
{
    char *dir = h_tmpdir();
    /* 8 bytes of header whose type is no frame type, then wait. */
    char *script = make_script(dir, "printf 'garbage!' >&3\nexec /bin/sleep 60");
    assert_int_equal(new_with_worker(script, 10000), CI_EPROTO);
    assert_true(strlen(ci_session_errmsg(NULL)) > 0);
    assert_no_children();
    h_rmtree(dir);
    free(script);
    free(dir);
}

static void test_missing_workspace_root_gives_eio(void **state)
{
    char *dir = h_tmpdir();
    char *root = h_fmt("%s/does-not-exist", dir);
    struct h_limits lim = {.root = root};
    ci_config *cfg = h_config(&lim);
    ci_session *s = (ci_session *)&s;

    assert_int_equal(ci_session_new(&s, cfg), CI_EIO);
    assert_null(s);
    assert_true(strlen(ci_session_errmsg(NULL)) > 0);
    assert_int_equal(access(root, F_OK), -1);
    assert_no_children();
    ci_config_free(cfg);
    h_rmtree(dir);
    free(root);
    free(dir);
}

/* A forked host that ignores SIGCHLD, so the kernel reaps its workers:
 * started by exec (a child shares no zygote of ours), each is still
 * watched by its own pidfd, answers, and dies by ci_session_free. The
 * child's exit status says which step failed. */
static int ignoring_sigchld_host(void)
{
    ci_config *cfg = ci_config_new();
    ci_session *s = NULL;
    ci_result *r = NULL;
    int pid, rc = 0;

    signal(SIGCHLD, SIG_IGN);
    if (!cfg || ci_config_set_zygote(cfg, 0) != CI_OK || ci_session_new(&s, cfg) != CI_OK)
        return 2;
    pid = ci_session_pid(s);
    if (ci_run(s, "6 * 7", &r) != CI_OK || !ci_result_value(r) ||
        strcmp(ci_result_value(r), "42") != 0)
        rc = 3;
    ci_result_free(r);
    ci_session_free(s);
    for (int i = 0; i < 200 && kill(pid, 0) == 0; i++)
        usleep(10000);
    if (rc == 0 && kill(pid, 0) == 0)
        rc = 4;
    ci_config_free(cfg);
    return rc;
}

static void test_a_host_that_ignores_sigchld_still_watches_its_workers(void **state)
{
    int status;
    pid_t child = fork();

    assert_true(child >= 0);
    if (child == 0)
        _exit(ignoring_sigchld_host());
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void *errmsg_in_thread(void *arg)
{
    const char *m = ci_session_errmsg(NULL);
    return (void *)(m ? strdup(m) : NULL);
}

static void test_thread_errmsg_is_per_thread(void **state)
{
    /* Make this thread's last ci_session_new fail. */
    assert_int_equal(new_with_worker("/nonexistent/ci-test/w2", 0), CI_ESPAWN);
    h_assert_contains(ci_session_errmsg(NULL), "/nonexistent/ci-test/w2");

    pthread_t t;
    void *ret;
    assert_int_equal(pthread_create(&t, NULL, errmsg_in_thread, NULL), 0);
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_non_null(ret);
    assert_string_equal((char *)ret, "");
    free(ret);

    /* Still there for this thread. */
    h_assert_contains(ci_session_errmsg(NULL), "/nonexistent/ci-test/w2");
}

/* -------------------------------------------------- with a live session */

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, NULL);
}

/* The message names the argument that was wrong, never the C function:
 * bindings pass it on under their own names. */
static void expect_errmsg(int rc, const char *want)
{
    assert_int_equal(rc, CI_EINVAL);
    h_assert_str(ci_session_errmsg(S), want);
}

static void test_bad_arguments_are_named_in_the_message(void **state)
{
    ci_result *r = NULL;
    void *data = NULL;
    size_t len = 0;
    ci_run_options opts = CI_RUN_OPTIONS_INIT;

    expect_errmsg(ci_run(S, NULL, &r), "code is NULL");
    expect_errmsg(ci_run(S, "1", NULL), "out is NULL");
    expect_errmsg(ci_session_get_file(S, "a", NULL, &len), "data is NULL");
    expect_errmsg(ci_session_get_file(S, "a", &data, NULL), "len is NULL");
    expect_errmsg(ci_session_get_file(S, NULL, &data, &len), "name is NULL");
    expect_errmsg(ci_session_put_file(S, "../x", "x", 1),
                  "name \"../x\" is not a relative path inside the workspace (no leading /, "
                  "no empty, \".\" or \"..\" component, under 4096 bytes)");
    expect_errmsg(ci_session_put_file(S, "x", NULL, 3), "data is NULL and len is 3");
    opts.version = 9;
    expect_errmsg(ci_run_ex(S, "1", &opts, &r),
                  "the run options' version is 9, not 1 to 2 (ci_run_options_init)");
    opts.version = CI_RUN_OPTIONS_VERSION;
    opts.timeout_ms = 86400001UL;
    expect_errmsg(ci_run_ex(S, "1", &opts, &r),
                  "the run options' timeout_ms is 86400001, over a day (86400000)");
    assert_null(r);
}

static void test_run_with_null_code_or_out_is_einval(void **state)
{
    ci_result *r = (ci_result *)&r;
    assert_int_equal(ci_run(S, NULL, &r), CI_EINVAL);
    assert_null(r);
    assert_int_equal(ci_run(S, "1", NULL), CI_EINVAL);
    h_expect(S, "1 + 1", "2", "");
}

static void test_run_with_cell_over_16_mib_is_etoobig(void **state)
{
    size_t n = 16u * 1024 * 1024 + 1;
    char *code = malloc(n + 1);
    assert_non_null(code);
    memset(code, ' ', n);
    code[0] = '1';
    code[n] = '\0';
    ci_result *r = (ci_result *)&r;
    assert_int_equal(ci_run(S, code, &r), CI_ETOOBIG);
    assert_null(r);
    free(code);
    h_expect(S, "2 + 2", "4", "");
}

static void test_run_with_cell_of_exactly_16_mib_runs(void **state)
{
    size_t n = 16u * 1024 * 1024;
    char *code = malloc(n + 1);
    assert_non_null(code);
    memset(code, 'c', n);
    memcpy(code, "1 #", 3);
    code[n] = '\0';
    ci_result *r = h_run_status(S, code, CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "1");
    ci_result_free(r);
    free(code);
}

static void test_invalid_utf8_cell_fails_cleanly(void **state)
{
    ci_result *r = NULL;
    int rc = ci_run(S, "x = '\xff\xfe'\nx", &r);
    /* Refused by the host, or an exception in the worker; never a crash. */
    if (rc == CI_OK) {
        if (ci_result_status(r) != CI_STATUS_ERROR) {
            h_dump(r);
            fail_msg("status %s", h_status_name(ci_result_status(r)));
        }
        const char *name = ci_result_error_name(r);
        assert_non_null(name);
        if (strcmp(name, "UnicodeDecodeError") != 0 && strcmp(name, "SyntaxError") != 0)
            fail_msg("error name %s", name);
    } else {
        assert_int_equal(rc, CI_EINVAL);
        assert_null(r);
    }
    ci_result_free(r);
    h_expect(S, "'fine'", "'fine'", "");
}

static void test_files_with_null_arguments_are_einval(void **state)
{
    void *data = &data;
    size_t len = 99;
    assert_int_equal(ci_session_put_file(S, NULL, "x", 1), CI_EINVAL);
    assert_int_equal(ci_session_put_file(S, "nulldata", NULL, 5), CI_EINVAL);
    assert_int_equal(ci_session_get_file(S, NULL, &data, &len), CI_EINVAL);
    assert_null(data);
    assert_int_equal(len, 0);
    assert_int_equal(ci_session_get_file(S, "x", NULL, &len), CI_EINVAL);
    data = &data;
    assert_int_equal(ci_session_get_file(S, "x", &data, NULL), CI_EINVAL);
    assert_null(data);
    /* A refused put wrote nothing. */
    h_expect(S, "import os\nos.path.exists('nulldata')", "False", "");
}

static void test_put_of_null_data_with_zero_length_is_ok(void **state)
{
    assert_int_equal(ci_session_put_file(S, "api-empty", NULL, 0), CI_OK);
    h_expect(S, "import os\nos.path.getsize('api-empty')", "0", "");
}

static void test_ok_result_getters(void **state)
{
    ci_result *r = h_run_status(S, "6 * 7", CI_STATUS_OK);
    size_t olen = 99, elen = 99;
    const char *o = ci_result_stdout(r, &olen);
    const char *e = ci_result_stderr(r, &elen);
    assert_non_null(o);
    assert_non_null(e);
    assert_string_equal(o, "");
    assert_string_equal(e, "");
    assert_int_equal(olen, 0);
    assert_int_equal(elen, 0);
    assert_non_null(ci_result_stdout(r, NULL));
    h_assert_str(ci_result_value(r), "42");
    assert_null(ci_result_error_name(r));
    assert_null(ci_result_error_value(r));
    assert_null(ci_result_traceback(r));
    assert_null(ci_result_traceback_full(r));
    assert_int_equal(ci_result_truncated(r), 0);
    assert_true(ci_result_execution_count(r) >= 1);
    ci_result_free(r);
}

static void test_session_getters_on_live_session(void **state)
{
    const char *ws = ci_session_workspace(S);
    assert_non_null(ws);
    assert_int_equal(ws[0], '/');
    struct stat st;
    assert_int_equal(stat(ws, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_true(ci_session_pid(S) > 0);
    assert_int_equal(kill(ci_session_pid(S), 0), 0);
}

static void test_result_outlives_its_session(void **state)
{
    ci_session *s = h_session(NULL);
    ci_result *r = h_run_status(s, "print('kept')\n'v'", CI_STATUS_OK);
    ci_session_free(s);
    size_t len = 0;
    assert_string_equal(ci_result_stdout(r, &len), "kept\n");
    assert_int_equal(len, 5);
    h_assert_str(ci_result_value(r), "'v'");
    ci_result_free(r);
}

static void test_free_kills_and_reaps_the_worker(void **state)
{
    ci_session *s = h_session(NULL);
    int pid = ci_session_pid(s);
    assert_true(pid > 0);
    ci_session_free(s);
    /* Gone, not a zombie: kill(2) finds no such process. */
    errno = 0;
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

/* The descriptors this process has open now. */
static int open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = -1; /* the DIR's own */

    assert_non_null(d);
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void test_an_idle_session_holds_five_descriptors(void **state)
{
    /* A session holds its worker's pidfd, channel, stdout and stderr and
     * its directory (the lock); the /proc/<pid> pin only for a worker
     * without a proc of its own. The first session also starts the
     * zygote, whose descriptors the host's every session shares. */
    ci_session *first = h_session(NULL), *s;
    int before = open_descriptors(), pinned;

    s = h_session(NULL);
    h_expect(s, "1 + 1", "2", "");
    pinned = (ci_session_sandbox(s) & (CI_SANDBOX_PIDNS | CI_SANDBOX_MNTNS)) !=
             (CI_SANDBOX_PIDNS | CI_SANDBOX_MNTNS);
    assert_int_equal(open_descriptors() - before, 5 + pinned);
    ci_session_free(s);
    assert_int_equal(open_descriptors(), before);
    ci_session_free(first);
}

static void test_config_is_copied_and_reusable(void **state)
{
    char *root = h_tmpdir();
    char buf[4096];
    /* The setter copies its string: changing ours afterwards changes nothing. */
    snprintf(buf, sizeof buf, "%s", root);
    ci_config *cfg = ci_config_new();
    assert_int_equal(ci_config_set_workspace_root(cfg, buf), CI_OK);
    assert_int_equal(ci_config_set_output_limit(cfg, 1024), CI_OK);
    memset(buf, 'x', strlen(buf));
    buf[0] = '/';

    ci_session *a = NULL, *b = NULL;
    int rc = ci_session_new(&a, cfg);
    if (rc != CI_OK)
        fail_msg("ci_session_new: %s", ci_session_errmsg(NULL));
    /* The same config for a second session. */
    rc = ci_session_new(&b, cfg);
    if (rc != CI_OK)
        fail_msg("ci_session_new: %s", ci_session_errmsg(NULL));
    /* Freed while the sessions live: they kept their own copy. */
    ci_config_free(cfg);

    ci_session *both[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        const char *ws = ci_session_workspace(both[i]);
        assert_non_null(ws);
        assert_memory_equal(ws, root, strlen(root));
        assert_int_equal(ws[strlen(root)], '/');
        ci_result *r = h_run_status(both[i], "print('w' * 5000)", CI_STATUS_OK);
        size_t len = 0;
        /* The output limit of 1024 holds: a head and a tail of 512. */
        const char *o = ci_result_stdout(r, &len);
        assert_true(len > 1024 && len < 1024 + 400);
        assert_non_null(strstr(o, "passed the output limit of 1 KiB"));
        assert_int_equal(strspn(o, "w"), 512);
        ci_result_free(r);
    }
    assert_string_not_equal(ci_session_workspace(a), ci_session_workspace(b));
    ci_session_free(a);
    ci_session_free(b);
    h_rmtree(root);
    free(root);
}

int main(void)
{
    h_watchdog(120);
    const struct CMUnitTest plain[] = {
        cmocka_unit_test(test_free_functions_accept_null),
        cmocka_unit_test(test_result_getters_on_null),
        cmocka_unit_test(test_session_getters_on_null),
        cmocka_unit_test(test_run_on_null_session_is_einval),
        cmocka_unit_test(test_files_on_null_session_are_einval),
        cmocka_unit_test(test_session_new_with_null_out_is_einval),
        cmocka_unit_test(test_config_new_gives_config),
        cmocka_unit_test(test_config_setters_reject_null_config),
        cmocka_unit_test(test_timeout_bounds),
        cmocka_unit_test(test_grace_bounds),
        cmocka_unit_test(test_startup_timeout_bounds),
        cmocka_unit_test(test_memory_limit_bounds),
        cmocka_unit_test(test_output_limit_bounds),
        cmocka_unit_test(test_file_limit_bounds),
        cmocka_unit_test(test_quota_bounds),
        cmocka_unit_test(test_task_limit_bounds),
        cmocka_unit_test(test_workspace_root_bounds),
        cmocka_unit_test(test_require_sandbox_bounds),
        cmocka_unit_test(test_strerror_gives_each_code_its_listed_message),
        cmocka_unit_test(test_strerror_messages_are_distinct_and_not_empty),
        cmocka_unit_test(test_strerror_unknown_codes),
        cmocka_unit_test(test_status_names_are_the_documented_words),
        cmocka_unit_test(test_error_codes_have_their_documented_values),
        /* These need no other child of ours alive: run before the group. */
        cmocka_unit_test(test_missing_worker_gives_espawn_naming_the_path),
        cmocka_unit_test(test_worker_that_exits_at_once_gives_espawn),
        cmocka_unit_test(test_worker_never_ready_gives_espawn_at_startup_timeout),
        cmocka_unit_test(test_malformed_first_message_gives_eproto),
        cmocka_unit_test(test_missing_workspace_root_gives_eio),
        cmocka_unit_test(test_thread_errmsg_is_per_thread),
    };
    const struct CMUnitTest live[] = {
        cmocka_unit_test(test_run_with_null_code_or_out_is_einval),
        cmocka_unit_test(test_bad_arguments_are_named_in_the_message),
        cmocka_unit_test(test_run_with_cell_over_16_mib_is_etoobig),
        cmocka_unit_test(test_run_with_cell_of_exactly_16_mib_runs),
        cmocka_unit_test(test_invalid_utf8_cell_fails_cleanly),
        cmocka_unit_test(test_files_with_null_arguments_are_einval),
        cmocka_unit_test(test_put_of_null_data_with_zero_length_is_ok),
        cmocka_unit_test(test_ok_result_getters),
        cmocka_unit_test(test_session_getters_on_live_session),
        cmocka_unit_test(test_result_outlives_its_session),
        cmocka_unit_test(test_config_is_copied_and_reusable),
        cmocka_unit_test(test_an_idle_session_holds_five_descriptors),
        cmocka_unit_test(test_free_kills_and_reaps_the_worker),
        cmocka_unit_test(test_a_host_that_ignores_sigchld_still_watches_its_workers),
    };
    int failed = cmocka_run_group_tests_name("api", plain, NULL, NULL);
    failed += cmocka_run_group_tests_name("api_live", live, group_setup, h_group_teardown);
    return failed ? 1 : 0;
}
