/*
 * Snapshots: ci_session_snapshot() carries the interpreter state and the
 * workspace into bytes that ci_session_restore() starts a new session
 * from; what cannot be carried is named; hostile bytes (cut, flipped,
 * forged with a good hash, over the limits) fail cleanly.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "snapshot.h"

static ci_session *S;

static int group_setup(void **state)
{
    (void)state;
    return h_group_session(&S, NULL);
}

/* A snapshot of @s; asserts CI_OK. */
static void *snapshot(ci_session *s, size_t *len)
{
    void *data = NULL;
    int rc = ci_session_snapshot(s, &data, len);

    if (rc != CI_OK)
        fprintf(stderr, "snapshot: %s\n", ci_session_errmsg(s));
    assert_int_equal(rc, CI_OK);
    assert_non_null(data);
    return data;
}

/* A session restored from @data; asserts CI_OK. */
static ci_session *restore(const ci_config *cfg, const void *data, size_t len)
{
    ci_session *t = NULL;
    int rc = ci_session_restore(&t, cfg, data, len);

    if (rc != CI_OK)
        fprintf(stderr, "restore: %s\n", ci_session_errmsg(NULL));
    assert_int_equal(rc, CI_OK);
    assert_non_null(t);
    return t;
}

/* The value of @expr in @s; malloc'ed. */
static char *value_of(ci_session *s, const char *expr)
{
    ci_result *r = h_run_status(s, expr, CI_STATUS_OK);
    char *v;

    assert_non_null(ci_result_value(r));
    v = strdup(ci_result_value(r));
    ci_result_free(r);
    return v;
}

/* Asserts that @expr has the same value in @s and @t. */
static void same_in_both(ci_session *s, ci_session *t, const char *expr)
{
    char *a = value_of(s, expr), *b = value_of(t, expr);

    assert_string_equal(a, b);
    free(a);
    free(b);
}

static char *left_out(const void *data, size_t len)
{
    char *list = NULL;

    assert_int_equal(ci_snapshot_left_out(data, len, &list), CI_OK);
    assert_non_null(list);
    return list;
}

static void test_a_restored_session_has_the_state_and_files(void **state)
{
    char *cell = h_cell("snapshot_state"), *list;
    ci_result *r;
    ci_session *t;
    size_t len;
    void *data;
    int count;

    (void)state;
    h_expect(S, cell, NULL, "");
    h_expect(S, "count * 2", "82", "");
    r = h_run(S, "None");
    count = ci_result_execution_count(r);
    ci_result_free(r);
    data = snapshot(S, &len);
    list = left_out(data, len);
    /* The cell's `with open(...) as f` leaves a closed file in f. */
    assert_string_equal(list, "f: a closed file\n");
    t = restore(NULL, data, len);

    /* The execution count goes on from the snapshot's. */
    r = h_run_status(t, "None", CI_STATUS_OK);
    assert_int_equal(ci_result_execution_count(r), count + 1);
    ci_result_free(r);
    h_expect(t, "add_one(count), scaled(2), p.norm2(), type(p).__name__, pair[0] is pair[1]",
             "(42, 82, 25, 'Point', True)", "");
    h_expect(t, "Out[2], _2, In[2]", "(82, 82, 'count * 2')", "");
    h_expect(t, "type(ping) is Pinged, ping.v", "(True, 5)", "");
    same_in_both(S, t, "int(pd.util.hash_pandas_object(frame).sum()), frame.shape");
    /* The generators draw on from the same state. */
    same_in_both(S, t, "random.random(), float(np.random.rand())");
    h_expect(t,
             "open('notes.txt').read(), open('sub/deep/data.bin', 'rb').read() == "
             "bytes(range(256)), oct(os.stat('run.sh').st_mode & 0o777), "
             "oct(os.stat('notes.txt').st_mode & 0o777)",
             "('hello', True, '0o700', '0o600')", "");
    /* A function's globals are the new session's namespace. */
    h_expect(t, "count = 10\nscaled(2)", "20", "");
    /* Each goes its own way: variables and files. */
    h_expect(t, "open('notes.txt', 'w').write('t only'); shared.append(3)", NULL, "");
    h_expect(S, "open('notes.txt').read(), shared, count", "('hello', [1, 2], 41)", "");
    assert_int_equal(ci_session_sandbox(t), ci_session_sandbox(S));
    ci_session_free(t);
    ci_free(list);
    ci_free(data);
    free(cell);
}

static void test_what_cannot_be_carried_is_named(void **state)
{
    char *cell = h_cell("snapshot_uncarried"), *list, code[64];
    ci_result *r;
    ci_session *t;
    size_t len;
    void *data;
    int gen_cell;

    (void)state;
    h_expect(S, cell, NULL, "");
    r = h_run_status(S, "(i for i in range(2))", CI_STATUS_OK);
    gen_cell = ci_result_execution_count(r);
    ci_result_free(r);
    data = snapshot(S, &len);
    list = left_out(data, len);
    assert_non_null(strstr(list, "gen: a generator in flight\n"));
    assert_non_null(strstr(list, "nested: a generator in flight\n"));
    assert_non_null(strstr(list, "fh: an open file\n"));
    assert_non_null(strstr(list, "worker: a thread\n"));
    snprintf(code, sizeof code, "Out[%d]: a generator in flight\n", gen_cell);
    assert_non_null(strstr(list, code));
    t = restore(NULL, data, len);
    h_expect(t, "kept, 'gen' in globals(), 'fh' in globals()", "('still here', False, False)",
             "");
    ci_session_free(t);
    h_expect(S, "fh.close(); del gen, nested, fh, worker", NULL, "");
    ci_free(list);
    ci_free(data);
    free(cell);
}

static void test_one_snapshot_restores_many_times(void **state)
{
    ci_session *t[3];
    size_t len;
    void *data;

    (void)state;
    h_expect(S, "branch = 'start'", NULL, "");
    data = snapshot(S, &len);
    for (int i = 0; i < 3; i++) {
        char code[64];

        t[i] = restore(NULL, data, len);
        snprintf(code, sizeof code, "branch = 'b%d'; open('branch.txt', 'w').write(branch);", i);
        h_expect(t[i], code, NULL, "");
    }
    for (int i = 0; i < 3; i++) {
        char want[64];

        snprintf(want, sizeof want, "('b%d', 'b%d')", i, i);
        h_expect(t[i], "branch, open('branch.txt').read()", want, "");
    }
    /* Freed before the others, and the source goes on. */
    ci_session_free(t[1]);
    h_expect(t[0], "branch", "'b0'", "");
    h_expect(S, "import os; branch, os.path.exists('branch.txt')", "('start', False)", "");
    ci_session_free(t[0]);
    ci_session_free(t[2]);
    ci_free(data);
}

static void test_a_snapshot_during_a_run_is_refused(void **state)
{
    struct h_runner run;
    void *data = (void *)1;
    size_t len = 1;

    (void)state;
    h_run_later(&run, S, "import time; time.sleep(1.5)");
    h_sleep_ms(400);
    assert_int_equal(ci_session_snapshot(S, &data, &len), CI_EBUSY);
    assert_null(data);
    assert_int_equal(len, 0);
    assert_int_equal(h_runner_join(&run), CI_OK);
    assert_int_equal(ci_session_snapshot(NULL, &data, &len), CI_EINVAL);
    assert_int_equal(ci_session_snapshot(S, NULL, &len), CI_EINVAL);
    assert_int_equal(ci_session_snapshot(S, &data, NULL), CI_EINVAL);
}

static void test_a_dead_session_has_no_snapshot(void **state)
{
    ci_session *s = h_session(NULL);
    void *data;
    size_t len;

    (void)state;
    ci_result_free(h_run_status(s, "import os; os._exit(3)", CI_STATUS_KILLED));
    assert_int_equal(ci_session_snapshot(s, &data, &len), CI_EDEAD);
    assert_null(data);
    ci_session_free(s);
}

static void test_a_snapshot_that_takes_too_long_is_stopped(void **state)
{
    struct h_limits lim = {.timeout_ms = 1000};
    ci_session *s = h_session(&lim);
    int64_t start;
    void *data;
    size_t len;

    (void)state;
    char *cell = h_cell("snapshot_slow_to_pickle");

    h_expect(s, cell, NULL, "");
    free(cell);
    start = h_now_ms();
    assert_int_equal(ci_session_snapshot(s, &data, &len), CI_EIO);
    assert_true(h_now_ms() - start < 10000);
    assert_non_null(strstr(ci_session_errmsg(s),
                           "taking the interpreter state ran past the session's timeout of "
                           "1000 ms"));
    /* Interrupted like a cell: the session lives on, state and all. */
    h_expect(s, "del slow; 6 * 7", "42", "");
    data = snapshot(s, &len);
    ci_free(data);
    ci_session_free(s);
}

/* ------------------------------------------------------- hostile bytes */

static void expect_refused(const void *data, size_t len, int code, const char *says)
{
    ci_session *t = (ci_session *)1;
    int rc = ci_session_restore(&t, NULL, data, len);

    if (rc != code || (says && !strstr(ci_session_errmsg(NULL), says)))
        fprintf(stderr, "restore of %zu bytes: %d, %s\n", len, rc, ci_session_errmsg(NULL));
    assert_int_equal(rc, code);
    assert_null(t);
    if (says)
        assert_non_null(strstr(ci_session_errmsg(NULL), says));
}

static void test_cut_and_flipped_snapshots_are_refused(void **state)
{
    size_t len, cuts[10];
    unsigned char *data, *copy;
    char *list;

    (void)state;
    h_expect(S, "cut_me = list(range(100))\nopen('cut.txt', 'w').write('x' * 1000);", NULL, "");
    data = snapshot(S, &len);
    size_t n = 0;
    for (size_t at = 0; at < 9; at++)
        cuts[n++] = at * len / 9;
    cuts[n++] = len - 1;
    for (size_t i = 0; i < n; i++)
        expect_refused(data, cuts[i], CI_EINVAL, "the snapshot is refused");
    copy = malloc(len);
    assert_non_null(copy);
    for (size_t i = 0; i < 64; i++) {
        size_t at = i * (len - 1) / 63;

        memcpy(copy, data, len);
        copy[at] ^= (unsigned char)(1u << (i % 8));
        expect_refused(copy, len, CI_EINVAL, "the snapshot is refused");
        assert_int_equal(ci_snapshot_left_out(copy, len, &list), CI_EINVAL);
        assert_null(list);
    }
    expect_refused(NULL, len, CI_EINVAL, "data is NULL");
    assert_int_equal(ci_session_restore(NULL, NULL, data, len), CI_EINVAL);
    free(copy);
    ci_free(data);
}

/* A snapshot made here: the sections of a real one's package set, then
 * @state, then @n entries of @paths (a path ending in '/' a directory)
 * with @contents; a good hash. */
static unsigned char *forge(const struct ci_snapshot_view *real, const void *state,
                            size_t state_len, const char *const *paths, size_t n,
                            const char *contents, size_t *len)
{
    struct ci_snapshot_writer w;
    unsigned char count[4] = {5, 0, 0, 0};

    assert_int_equal(ci_snapshot_begin(&w, 1u << 30), CI_OK);
    assert_int_equal(ci_snapshot_add(&w, CI_SNAP_PACKAGES, real->packages, real->packages_len,
                                     NULL, 0),
                     CI_OK);
    assert_int_equal(ci_snapshot_add(&w, CI_SNAP_COUNT, count, 4, NULL, 0), CI_OK);
    assert_int_equal(ci_snapshot_add(&w, CI_SNAP_STATE, state, state_len, NULL, 0), CI_OK);
    for (size_t i = 0; i < n; i++) {
        size_t pl = strlen(paths[i]), at, cl = strlen(contents);
        unsigned char *data;

        if (paths[i][pl - 1] == '/') {
            assert_int_equal(ci_snapshot_add_dir(&w, paths[i], pl - 1), CI_OK);
            continue;
        }
        assert_int_equal(ci_snapshot_reserve_file(&w, paths[i], pl, 0, cl, &data, &at), CI_OK);
        memcpy(data, contents, cl);
    }
    assert_int_equal(ci_snapshot_end(&w), CI_OK);
    *len = w.len;
    return w.p;
}

/* A real snapshot of the group's session, parsed: the package set. */
static void *real_snapshot(struct ci_snapshot_view *v, size_t *len)
{
    const char *why;
    void *data = snapshot(S, len);

    assert_int_equal(ci_snapshot_parse(data, *len, v, &why), CI_OK);
    return data;
}

static void count_call(void *payload, const char *name, const char *args, size_t len,
                       ci_reply *reply)
{
    (void)name;
    (void)args;
    (void)len;
    ++*(int *)payload;
    ci_reply_json(reply, "1", 1);
}

static void test_pickles_never_reach_the_hosts_functions(void **state)
{
    static const char forged[] = "ccodeinterp_host\nsecret_op\n(tR.";
    ci_config *cfg = h_config(NULL);
    ci_session *s = NULL, *t = (ci_session *)1;
    struct ci_snapshot_view v;
    const char *why;
    int calls = 0;
    size_t len, flen;
    void *data;
    unsigned char *f;

    (void)state;
    assert_int_equal(ci_config_add_function(cfg, "secret_op", NULL, count_call, &calls), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    char *cell = h_cell("snapshot_calls_the_host");

    h_expect(s, cell, "1", "");
    free(cell);
    assert_int_equal(calls, 1);
    data = snapshot(s, &len);
    assert_int_equal(calls, 1);
    {
        char *list = left_out(data, len);
        assert_non_null(strstr(list, "calls: RuntimeError: "));
        ci_free(list);
    }
    assert_int_equal(ci_snapshot_parse(data, len, &v, &why), CI_OK);
    f = forge(&v, forged, sizeof forged - 1, NULL, 0, "", &flen);
    assert_int_equal(ci_session_restore(&t, cfg, f, flen), CI_EINVAL);
    assert_null(t);
    assert_int_equal(calls, 1);
    free(f);
    ci_free(data);
    ci_session_free(s);
    ci_config_free(cfg);
}

static void test_what_is_too_deep_is_left_out_and_the_rest_restores(void **state)
{
    ci_session *t;
    size_t len;
    void *data;
    char *list;

    (void)state;
    char *cell = h_cell("snapshot_deep_tree");

    h_expect(S, cell, NULL, "");
    free(cell);
    h_expect(S, "globals()['two\\nlines: a symbolic link'] = 1", NULL, "");
    h_expect(S, "globals()['gen\\nfake.txt: a symbolic link'] = (i for i in [1])", NULL, "");
    data = snapshot(S, &len);
    list = left_out(data, len);
    assert_non_null(strstr(list, "/x/f: deeper than 64 directories\n"));
    assert_non_null(strstr(list, "gen?fake.txt: a symbolic link: a generator in flight\n"));
    assert_null(strstr(list, "\nfake.txt"));
    t = restore(NULL, data, len);
    h_expect(t, "import os\nos.path.isdir(deep), os.path.exists(deep + '/f'), "
             "os.path.isdir(deep[:-2] + '/d'), globals()['two\\nlines: a symbolic link']",
             "(True, False, True, 1)", "");
    ci_session_free(t);
    h_expect(S, "import shutil; shutil.rmtree('x'); del deep", NULL, "");
    h_expect(S, "del globals()['two\\nlines: a symbolic link'], "
             "globals()['gen\\nfake.txt: a symbolic link']", NULL, "");
    ci_free(list);
    ci_free(data);
}

static void test_forged_paths_are_refused(void **state)
{
    static const char *const bad[][3] = {
        {"../escape.txt"}, {"/etc/escape.txt"}, {"a/../../escape.txt"}, {"a//b.txt"},
        {"./a.txt"},       {"a/./b.txt"},       {"missing/dir/f.txt"},  {"twice.txt", "twice.txt"},
        {"d/", "d/"},      {"file.txt", "file.txt/"},
    };
    struct ci_snapshot_view v;
    size_t len, flen;
    void *real = real_snapshot(&v, &len);

    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = bad[i][1] ? 2 : 1;
        unsigned char *f = forge(&v, v.state, v.state_len, bad[i], n, "x", &flen);

        expect_refused(f, flen, CI_EINVAL, i < 6 ? "a path that is not relative" : "the snapshot");
        free(f);
    }
    /* A directory alone is fine, and its file after it. */
    {
        static const char *const good[] = {"d/", "d/f.txt"};
        unsigned char *f = forge(&v, v.state, v.state_len, good, 2, "inside", &flen);
        ci_session *t = restore(NULL, f, flen);

        h_expect(t, "open('d/f.txt').read()", "'inside'", "");
        ci_session_free(t);
        free(f);
    }
    ci_free(real);
}

static void test_forged_states_fail_inside_the_sandbox(void **state)
{
    /* Pickles that run code as they load: a process, a file outside the
     * workspace, garbage, a loop past the timeout. */
    static const char spawn[] = "cos\nsystem\n(S'touch /tmp/ci-snapshot-forged'\ntR.";
    static const char writes[] = "cbuiltins\nopen\n(S'/tmp/ci-snapshot-forged'\nS'w'\ntR.";
    static const char sleeps[] = "ctime\nsleep\n(I60\ntR.";
    static const char garbage[] = "\x80\x05not a pickle at all";
    struct { const char *state; size_t len; int code; const char *says; } cases[] = {
        {spawn, sizeof spawn - 1, CI_EINVAL, NULL},
        {writes, sizeof writes - 1, CI_EINVAL, NULL},
        {garbage, sizeof garbage - 1, CI_EINVAL, "failed loading the snapshot's interpreter state"},
    };
    struct ci_snapshot_view v;
    struct h_limits lim = {.timeout_ms = 1000};
    ci_config *cfg = h_config(&lim);
    size_t len, flen;
    void *real = real_snapshot(&v, &len);
    unsigned char *f;
    int64_t start;

    (void)state;
    unlink("/tmp/ci-snapshot-forged");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        f = forge(&v, cases[i].state, cases[i].len, NULL, 0, "", &flen);
        expect_refused(f, flen, cases[i].code, cases[i].says);
        free(f);
        assert_int_equal(access("/tmp/ci-snapshot-forged", F_OK), -1);
    }
    f = forge(&v, sleeps, sizeof sleeps - 1, NULL, 0, "", &flen);
    start = h_now_ms();
    {
        ci_session *t = (ci_session *)1;
        assert_int_equal(ci_session_restore(&t, cfg, f, flen), CI_EIO);
        assert_null(t);
    }
    assert_true(h_now_ms() - start < 15000);
    free(f);
    ci_config_free(cfg);
    ci_free(real);
}

static void test_another_package_set_is_refused(void **state)
{
    struct ci_snapshot_view v, other;
    size_t len, flen;
    void *real = real_snapshot(&v, &len);
    char *packages = malloc(v.packages_len + 32);
    unsigned char *f;

    (void)state;
    memcpy(packages, v.packages, v.packages_len);
    memcpy(packages + v.packages_len, "numpy 0.0.1\n", 12);
    other = v;
    other.packages = packages;
    other.packages_len = v.packages_len + 12;
    f = forge(&other, v.state, v.state_len, NULL, 0, "", &flen);
    expect_refused(f, flen, CI_EINVAL, "another package set: numpy 0.0.1 in the snapshot, ");
    free(f);
    free(packages);
    ci_free(real);
}

static void test_a_snapshot_over_the_quotas_starts_no_session(void **state)
{
    static const char *const many[] = {
        "f00", "f01", "f02", "f03", "f04", "f05", "f06", "f07", "f08", "f09", "f10", "f11",
        "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19", "f20", "f21", "f22", "f23",
        "f24", "f25", "f26", "f27", "f28", "f29", "f30", "f31", "f32", "f33", "f34", "f35",
        "f36", "f37", "f38", "f39", "f40", "f41", "f42", "f43", "f44", "f45", "f46", "f47",
        "f48", "f49", "f50", "f51", "f52", "f53", "f54", "f55", "f56", "f57", "f58", "f59",
        "f60", "f61", "f62", "f63", "f64", "f65", "f66", "f67", "f68", "f69",
    };
    struct ci_snapshot_view v;
    ci_config *cfg = ci_config_new();
    size_t len, flen;
    void *real = real_snapshot(&v, &len);
    char *big = malloc(2u << 20);
    unsigned char *f;

    (void)state;
    memset(big, 'x', (2u << 20) - 1);
    big[(2u << 20) - 1] = '\0';
    assert_int_equal(ci_config_set_disk_quota(cfg, 1u << 20), CI_OK);
    f = forge(&v, v.state, v.state_len, many, 1, big, &flen);
    {
        ci_session *t = (ci_session *)1;
        assert_int_equal(ci_session_restore(&t, cfg, f, flen), CI_ETOOBIG);
        assert_null(t);
        assert_non_null(strstr(ci_session_errmsg(NULL), "disk quota"));
    }
    free(f);
    assert_int_equal(ci_config_set_disk_quota(cfg, 64u << 20), CI_OK);
    assert_int_equal(ci_config_set_inode_quota(cfg, 64), CI_OK);
    f = forge(&v, v.state, v.state_len, many, sizeof many / sizeof *many, "x", &flen);
    {
        ci_session *t = (ci_session *)1;
        assert_int_equal(ci_session_restore(&t, cfg, f, flen), CI_ETOOBIG);
        assert_null(t);
        assert_non_null(strstr(ci_session_errmsg(NULL), "inode quota"));
    }
    free(f);
    free(big);
    ci_config_free(cfg);
    ci_free(real);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_restored_session_has_the_state_and_files, h_setup_alive),
        cmocka_unit_test_setup(test_what_cannot_be_carried_is_named, h_setup_alive),
        cmocka_unit_test_setup(test_one_snapshot_restores_many_times, h_setup_alive),
        cmocka_unit_test_setup(test_a_snapshot_during_a_run_is_refused, h_setup_alive),
        cmocka_unit_test(test_a_dead_session_has_no_snapshot),
        cmocka_unit_test(test_a_snapshot_that_takes_too_long_is_stopped),
        cmocka_unit_test(test_pickles_never_reach_the_hosts_functions),
        cmocka_unit_test_setup(test_what_is_too_deep_is_left_out_and_the_rest_restores,
                               h_setup_alive),
        cmocka_unit_test_setup(test_cut_and_flipped_snapshots_are_refused, h_setup_alive),
        cmocka_unit_test_setup(test_forged_paths_are_refused, h_setup_alive),
        cmocka_unit_test_setup(test_forged_states_fail_inside_the_sandbox, h_setup_alive),
        cmocka_unit_test_setup(test_another_package_set_is_refused, h_setup_alive),
        cmocka_unit_test_setup(test_a_snapshot_over_the_quotas_starts_no_session, h_setup_alive),
    };

    h_watchdog(600);
    if (sodium_init() < 0)
        return 1;
    return cmocka_run_group_tests_name("snapshot", tests, group_setup, h_group_teardown);
}
