/*
 * The audit trail: what each event records, the hash chain across
 * sessions, threads and configs sharing a file, the callback, failing
 * closed when the log cannot be written, and codeinterp-audit verify
 * naming the line an edit, a removal, a swap or a cut broke.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "audit.h"
#include "helpers.h"
#include "proto.h"

static char *dir;

static char *log_path(const char *name)
{
    return h_fmt("%s/%s", dir, name);
}

/* 1 if the workspace of @s holds @name. */
static int in_workspace(ci_session *s, const char *name)
{
    char *path = h_fmt("%s/%s", ci_session_workspace(s), name);
    int there = access(path, F_OK) == 0;

    free(path);
    return there;
}

static void hex_sha256(const void *p, size_t n, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, p, n);
    sodium_bin2hex(out, 65, h, sizeof h);
}

/* The log's lines, each without its newline, NULL-terminated; asserts the
 * file ends in one. */
struct lines {
    char **line;
    json_t **doc;
    size_t n;
};

static struct lines read_log(const char *path)
{
    struct lines l = {0};
    size_t len;
    char *text = h_read_file(path, &len), *p, *nl;

    assert_non_null(text);
    assert_true(len > 0 && text[len - 1] == '\n');
    for (p = text; (nl = strchr(p, '\n')); p = nl + 1) {
        json_error_t e;
        l.line = realloc(l.line, (l.n + 1) * sizeof *l.line);
        l.doc = realloc(l.doc, (l.n + 1) * sizeof *l.doc);
        assert_non_null(l.line);
        assert_non_null(l.doc);
        l.line[l.n] = strndup(p, (size_t)(nl - p));
        l.doc[l.n] = json_loads(l.line[l.n], JSON_REJECT_DUPLICATES, &e);
        if (!l.doc[l.n])
            fail_msg("line %zu is not JSON (%s): %s", l.n + 1, e.text, l.line[l.n]);
        l.n++;
    }
    free(text);
    return l;
}

static void free_lines(struct lines *l)
{
    size_t i;
    for (i = 0; i < l->n; i++) {
        free(l->line[i]);
        json_decref(l->doc[i]);
    }
    free(l->line);
    free(l->doc);
}

static const char *str(json_t *doc, const char *key)
{
    const char *v = json_string_value(json_object_get(doc, key));
    if (!v)
        fail_msg("no string %s in %s", key, json_dumps(doc, JSON_COMPACT));
    return v;
}

static long long num(json_t *doc, const char *key)
{
    json_t *v = json_object_get(doc, key);
    if (!json_is_integer(v))
        fail_msg("no integer %s in %s", key, json_dumps(doc, JSON_COMPACT));
    return json_integer_value(v);
}

/* Seq 1, 2, 3...; each prev the SHA-256 of the line before; 64 zeros first. */
static void assert_chain(const struct lines *l)
{
    char want[65] = CI_AUDIT_FIRST_PREV;
    size_t i;

    for (i = 0; i < l->n; i++) {
        assert_int_equal(num(l->doc[i], "seq"), (long long)i + 1);
        h_assert_str(str(l->doc[i], "prev"), want);
        hex_sha256(l->line[i], strlen(l->line[i]), want);
    }
}

/* The line of the @nth (from 0) event named @event (of session @id unless
 * NULL), failing the test if there is none. */
static json_t *find(const struct lines *l, const char *event, const char *id, int nth)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        if (strcmp(str(l->doc[i], "event"), event) == 0 &&
            (!id || strcmp(str(l->doc[i], "session"), id) == 0) && nth-- == 0)
            return l->doc[i];
    fail_msg("no %s event", event);
    return NULL;
}

static ci_config *audit_config(const char *path)
{
    ci_config *cfg = h_config(NULL);
    assert_int_equal(ci_config_set_audit_log(cfg, path), CI_OK);
    return cfg;
}

/* A session logging to @path, its config already freed: the session
 * holds the log. */
static ci_session *audit_session(const char *path)
{
    ci_config *cfg = audit_config(path);
    ci_session *s = NULL;

    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    return s;
}

static void test_a_session_logs_its_start_cells_files_and_end(void **state)
{
    char *path = log_path("session.log"), sha[65];
    const char *cell = "open('out.txt', 'w').write('hello')";
    ci_config *cfg = audit_config(path);
    ci_session *s = NULL;
    ci_result *r;
    void *data;
    size_t len, i;
    struct lines l;
    json_t *ev, *sandbox;
    unsigned layers;
    unsigned long long wall, cpu, peak;

    assert_int_equal(ci_config_set_timeout_ms(cfg, 45000), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg); /* the session holds the log */
    layers = ci_session_sandbox(s);
    r = h_run_status(s, cell, CI_STATUS_OK);
    wall = ci_result_wall_time_us(r);
    cpu = ci_result_cpu_time_us(r);
    peak = ci_result_peak_memory(r);
    ci_result_free(r);
    assert_int_equal(ci_session_put_file(s, "in.csv", "a,b\n1,2\n", 8), CI_OK);
    assert_int_equal(ci_session_get_file(s, "out.txt", &data, &len), CI_OK);
    ci_free(data);
    assert_int_equal(ci_session_get_file(s, "missing.txt", &data, &len), CI_ENOENT);
    r = h_run_status(s, "1/0", CI_STATUS_ERROR);
    ci_result_free(r);
    ci_session_free(s);

    l = read_log(path);
    assert_int_equal(l.n, 9);
    assert_chain(&l);
    static const char *const order[] = {"session_start", "cell_start", "cell", "file_put",
                                        "file_get", "file_get", "cell_start", "cell",
                                        "session_end"};
    for (i = 0; i < l.n; i++) {
        const char *t = str(l.doc[i], "time");
        h_assert_str(str(l.doc[i], "event"), order[i]);
        assert_int_equal(strlen(str(l.doc[i], "session")), 32);
        h_assert_str(str(l.doc[i], "session"), str(l.doc[0], "session"));
        assert_int_equal(strlen(t), 27);
        assert_int_equal(t[26], 'Z');
    }

    ev = l.doc[0];
    sandbox = json_object_get(ev, "sandbox");
    assert_int_equal(json_array_size(sandbox), __builtin_popcount(layers));
    h_assert_str(json_string_value(json_array_get(sandbox, 0)), "seccomp");
    assert_int_equal(num(json_object_get(ev, "limits"), "timeout_ms"), 45000);
    assert_int_equal(num(json_object_get(ev, "limits"), "memory_limit"), 2LL << 30);
    assert_true(json_is_null(json_object_get(ev, "manifest")));
    assert_true(num(ev, "worker_pid") > 0);

    hex_sha256(cell, strlen(cell), sha);
    ev = l.doc[2];
    assert_int_equal(num(ev, "execution_count"), 1);
    h_assert_str(str(ev, "sha256"), sha);
    assert_int_equal(num(ev, "bytes"), (long long)strlen(cell));
    h_assert_str(str(ev, "status"), "ok");
    assert_true(json_is_null(json_object_get(ev, "error_name")));
    /* What the result says, to the microsecond and the byte. */
    assert_true(wall > 0);
    assert_int_equal(num(ev, "wall_us"), (long long)wall);
    assert_int_equal(num(ev, "cpu_us"), (long long)cpu);
    assert_int_equal(num(ev, "peak_memory"), (long long)peak);
    assert_int_equal(json_array_size(json_object_get(ev, "files")), 1);
    h_assert_str(json_string_value(json_array_get(json_object_get(ev, "files"), 0)), "out.txt");
    h_assert_str(str(l.doc[1], "sha256"), sha);

    hex_sha256("a,b\n1,2\n", 8, sha);
    h_assert_str(str(l.doc[3], "name"), "in.csv");
    assert_int_equal(num(l.doc[3], "bytes"), 8);
    h_assert_str(str(l.doc[3], "sha256"), sha);
    hex_sha256("hello", 5, sha);
    h_assert_str(str(l.doc[4], "name"), "out.txt");
    assert_int_equal(num(l.doc[4], "bytes"), 5);
    h_assert_str(str(l.doc[4], "sha256"), sha);
    h_assert_str(str(l.doc[5], "error"), "CI_ENOENT");

    h_assert_str(str(l.doc[7], "status"), "error");
    h_assert_str(str(l.doc[7], "error_name"), "ZeroDivisionError");
    assert_int_equal(num(l.doc[7], "execution_count"), 2);
    assert_int_equal(num(l.doc[8], "cells"), 2);
    free_lines(&l);
    free(path);
}

static void test_a_snapshot_and_its_restore_are_logged(void **state)
{
    char *path = log_path("snapshot.log"), sha[65];
    ci_config *cfg = audit_config(path);
    ci_session *s = NULL, *t = NULL;
    struct lines l;
    void *data;
    size_t len;

    (void)state;
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_result_free(h_run_status(s, "x = 1; open('f.txt', 'w').write('f');", CI_STATUS_OK));
    assert_int_equal(ci_session_snapshot(s, &data, &len), CI_OK);
    assert_int_equal(ci_session_restore(&t, cfg, data, len), CI_OK);
    {
        ci_session *b = NULL;
        assert_int_equal(ci_session_fork(s, &b), CI_OK);
        ci_session_free(b);
    }
    ci_session_free(s);
    ci_config_free(cfg);

    l = read_log(path);
    assert_chain(&l);
    /* The snapshot names itself by its own last 32 bytes, the SHA-256 of
     * the rest. */
    hex_sha256(data, len - 32, sha);
    h_assert_str(str(find(&l, "snapshot", str(l.doc[0], "session"), 0), "sha256"), sha);
    assert_int_equal(num(find(&l, "snapshot", NULL, 0), "bytes"), (long long)len);
    {
        json_t *restore = find(&l, "restore", NULL, 0);
        const char *id = str(restore, "session");

        h_assert_str(str(restore, "sha256"), sha);
        assert_true(strcmp(id, str(l.doc[0], "session")) != 0);
        /* The new session's start, then its file, then the restore. */
        find(&l, "session_start", id, 0);
        h_assert_str(str(find(&l, "file_put", id, 0), "name"), "f.txt");
    }
    {
        /* The parent names its branch, and counts only its one cell. */
        const char *parent = str(l.doc[0], "session");
        const char *branch = str(find(&l, "fork", parent, 0), "branch");

        h_assert_str(str(find(&l, "restore", branch, 0), "sha256"),
                     str(find(&l, "snapshot", parent, 1), "sha256"));
        assert_int_equal(num(find(&l, "session_end", parent, 0), "cells"), 1);
    }
    free_lines(&l);
    ci_session_free(t);
    ci_free(data);
    free(path);
}

static void reply_42(void *payload, const char *name, const char *args, size_t len,
                     ci_reply *reply)
{
    *(size_t *)payload = len;
    ci_reply_json(reply, "42", 2);
}

static void test_a_host_function_call_is_logged_with_its_sizes(void **state)
{
    char *path = log_path("call.log");
    ci_config *cfg = audit_config(path);
    ci_session *s = NULL;
    size_t args_len = 0;
    struct lines l;
    json_t *ev;

    assert_int_equal(ci_config_add_function(cfg, "answer", NULL, reply_42, &args_len), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    h_expect(s, "answer(question='life')", "42", NULL);
    ci_session_free(s);

    l = read_log(path);
    assert_chain(&l);
    ev = find(&l, "call", NULL, 0);
    h_assert_str(str(ev, "function"), "answer");
    assert_true(args_len > 0);
    assert_int_equal(num(ev, "args_bytes"), (long long)args_len);
    assert_int_equal(num(ev, "reply_bytes"), 2);
    h_assert_str(str(ev, "outcome"), "returned");
    free_lines(&l);
    free(path);
}

static void test_a_forbidden_syscall_logs_refusal_kill_and_restart(void **state)
{
    const char *code = h_kill_listed_cell();
    char *path = log_path("kill.log");
    ci_session *s = audit_session(path);
    struct lines l;
    json_t *ev;

    ci_result_free(h_run_status(s, code, CI_STATUS_KILLED));
    assert_int_equal(ci_session_restart(s), CI_OK);
    ci_session_free(s);

    l = read_log(path);
    assert_chain(&l);
    ev = find(&l, "refusal", NULL, 0);
    h_assert_str(str(ev, "kind"), "syscall");
    h_assert_str(str(ev, "syscall"), "ptrace");
    h_assert_str(str(find(&l, "cell", NULL, 0), "status"), "killed");
    ev = find(&l, "kill", NULL, 0);
    h_assert_str(str(ev, "cause"), "SandboxViolation");
    h_assert_contains(str(ev, "message"), "ptrace");
    ev = find(&l, "restart", NULL, 0);
    h_assert_str(json_string_value(json_array_get(json_object_get(ev, "sandbox"), 0)), "seccomp");
    h_assert_str(str(l.doc[l.n - 1], "event"), "session_end");
    free_lines(&l);
    free(path);
}

/* The refusal events of cell @count in @l, in order; *@n how many. */
static json_t **refusals_of(const struct lines *l, int count, size_t *n)
{
    static json_t *found[64];
    size_t i;

    *n = 0;
    for (i = 0; i < l->n && *n < 64; i++)
        if (strcmp(str(l->doc[i], "event"), "refusal") == 0 &&
            num(l->doc[i], "execution_count") == count)
            found[(*n)++] = l->doc[i];
    return found;
}

/* One refusal of cell @count: its kind, detail and times. */
static void assert_refusal(const struct lines *l, int count, const char *kind,
                           const char *detail, long long times)
{
    size_t n;
    json_t **ev = refusals_of(l, count, &n);

    if (n != 1)
        fail_msg("cell %d has %zu refusal events, not 1", count, n);
    h_assert_str(str(ev[0], "kind"), kind);
    h_assert_contains(str(ev[0], "detail"), detail);
    assert_int_equal(num(ev[0], "times"), times);
}

static void test_refusals_a_cell_survives_are_logged_by_kind(void **state)
{
    static const char *const cells[] = {
        /* 1 */ "import contextlib, os, socket, subprocess, requests",
        /* 2 */ "for _ in range(3):\n    with contextlib.suppress(OSError): open('/etc/shadow')",
        /* 3 */ "with contextlib.suppress(OSError): open('/usr/lib/planted.py', 'w')",
        /* 4 */ "with contextlib.suppress(OSError): socket.create_connection(('192.0.2.1', 80))",
        /* 5 */ "with contextlib.suppress(OSError): subprocess.run(['ls', '/'])",
        /* 6 */ "with contextlib.suppress(OSError): os.symlink('/etc/passwd', 'link')",
        /* 7 */ "with contextlib.suppress(OSError): os.kill(4242, 15)",
        /* 8 */ "open('notes.txt', 'w').write('x'); os.listdir('.'); import json, email",
        /* 9 */ "os.chmod('notes.txt', 0o644)",
        /* 10 */ "for i in range(100):\n    with contextlib.suppress(OSError): open(f'/etc/x{i}')",
    };
    char *path = log_path("refusals.log");
    ci_session *s = audit_session(path);
    struct lines l;
    size_t i, n;
    json_t **ev;

    for (i = 0; i < sizeof cells / sizeof *cells; i++)
        ci_result_free(h_run_status(s, cells[i], i == 8 ? CI_STATUS_ERROR : CI_STATUS_OK));
    ci_session_free(s);

    l = read_log(path);
    assert_chain(&l);
    refusals_of(&l, 1, &n);
    assert_int_equal(n, 0);
    assert_refusal(&l, 2, "path", "read /etc/shadow", 3);
    assert_refusal(&l, 3, "path", "write /usr/lib/planted.py", 1);
    assert_refusal(&l, 4, "network", "socket.getaddrinfo '192.0.2.1'", 1);
    assert_refusal(&l, 5, "process", "subprocess.Popen", 1);
    assert_refusal(&l, 6, "symlink", "'link' -> '/etc/passwd'", 1);
    assert_refusal(&l, 7, "signal", "os.kill pid=4242 signal=15", 1);
    /* What the session may do is never a refusal. */
    refusals_of(&l, 8, &n);
    assert_int_equal(n, 0);
    assert_refusal(&l, 9, "mode", "os.chmod 'notes.txt' mode=0o644", 1);
    /* A flood is cut: the first CI_REFUSALS_MAX, the rest counted. */
    ev = refusals_of(&l, 10, &n);
    assert_int_equal(n, CI_REFUSALS_MAX);
    h_assert_str(str(ev[0], "detail"), "read /etc/x0");
    h_assert_str(str(ev[CI_REFUSALS_MAX - 1], "detail"), "read /etc/x31");
    for (i = 0; i < l.n; i++)
        if (strcmp(str(l.doc[i], "event"), "cell") == 0)
            assert_int_equal(num(l.doc[i], "refusals_omitted"),
                             num(l.doc[i], "execution_count") == 10 ? 100 - CI_REFUSALS_MAX : 0);
    /* Each cell's refusals come just before its cell event. */
    for (i = 1; i < l.n; i++)
        if (strcmp(str(l.doc[i], "event"), "refusal") == 0)
            assert_true(strcmp(str(l.doc[i - 1], "event"), "cell_start") == 0 ||
                        strcmp(str(l.doc[i - 1], "event"), "refusal") == 0);
    free_lines(&l);
    free(path);
}

struct collected {
    char *text; /* every line given, each followed by a newline */
    size_t len;
    int refuse_after; /* refuse every event after this many; -1: never */
    int count;
};

static int collect(const char *line, size_t len, void *payload)
{
    struct collected *c = payload;

    assert_int_equal(line[len], '\0');
    if (c->refuse_after >= 0 && c->count >= c->refuse_after)
        return -1;
    c->count++;
    c->text = realloc(c->text, c->len + len + 2);
    assert_non_null(c->text);
    memcpy(c->text + c->len, line, len);
    c->len += len;
    c->text[c->len++] = '\n';
    c->text[c->len] = '\0';
    return 0;
}

static void test_the_callback_gets_the_lines_the_file_gets(void **state)
{
    char *path = log_path("callback.log"), *file;
    ci_config *cfg = audit_config(path);
    struct collected c = {.refuse_after = -1};
    ci_session *s = NULL;
    size_t len;

    assert_int_equal(ci_config_set_event_fn(cfg, collect, &c), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    h_expect(s, "2 + 2", "4", NULL);
    ci_session_free(s);
    ci_config_free(cfg);
    file = h_read_file(path, &len);
    assert_int_equal(c.count, 4);
    h_assert_str(c.text, file);
    free(file);
    free(c.text);
    free(path);
}

static void test_a_refused_event_stops_the_session_until_a_restart(void **state)
{
    struct collected c = {.refuse_after = 2}; /* session_start, cell_start */
    ci_config *cfg = h_config(NULL);
    ci_session *s = NULL;
    ci_result *r = NULL;
    void *data = NULL;
    size_t len;

    assert_int_equal(ci_config_set_event_fn(cfg, collect, &c), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    /* Its end is not recorded: the result still comes back. */
    r = h_run_status(s, "6 * 7", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "42");
    ci_result_free(r);
    assert_int_equal(ci_run(s, "print('unrecorded')", &r), CI_EIO);
    assert_null(r);
    h_assert_contains(ci_session_errmsg(s), "ci_session_restart");
    assert_int_equal(ci_session_put_file(s, "x", "1", 1), CI_EIO);
    assert_int_equal(ci_session_get_file(s, "x", &data, &len), CI_EIO);
    assert_null(data);
    assert_false(in_workspace(s, "x"));
    /* A restart whose event is refused too stays stopped... */
    assert_int_equal(ci_session_restart(s), CI_EIO);
    assert_int_equal(ci_run(s, "1", &r), CI_EIO);
    /* ...and one recorded goes on. */
    c.refuse_after = -1;
    assert_int_equal(ci_session_restart(s), CI_OK);
    h_expect(s, "1 + 1", "2", NULL);
    ci_session_free(s);
    assert_int_equal(c.count, 2 + 1 + 2 + 1); /* restart, a cell, the end */
    free(c.text);
}

static void test_a_failed_start_is_logged_and_keeps_its_own_message(void **state)
{
    char *path = log_path("failed.log");
    ci_config *cfg = audit_config(path);
    struct lines l;
    json_t *ev;

    /* Refused before any worker starts: only a zygote's child has one. */
    assert_int_equal(ci_config_set_zygote(cfg, 0), CI_OK);
    assert_int_equal(ci_config_require_sandbox(cfg, CI_SANDBOX_SECCOMP | CI_SANDBOX_PIDNS), CI_OK);
    h_start_fails(cfg, CI_ESANDBOX, "PID namespace");
    ci_config_free(cfg);

    l = read_log(path);
    assert_int_equal(l.n, 2);
    assert_chain(&l);
    ev = l.doc[0];
    h_assert_str(str(ev, "event"), "session_start_failed");
    h_assert_str(str(ev, "error"), "CI_ESANDBOX");
    h_assert_contains(str(ev, "message"), "PID namespace");
    h_assert_str(json_string_value(json_array_get(json_object_get(ev, "required_sandbox"), 1)),
                 "pidns");
    h_assert_str(str(l.doc[1], "event"), "session_end");
    free_lines(&l);
    free(path);
}

static void test_an_unopenable_log_fails_the_session_with_eio(void **state)
{
    char *path = h_fmt("%s/no-such-dir/audit.log", dir);
    ci_config *cfg = audit_config(path);

    h_start_fails(cfg, CI_EIO, "cannot open the audit log");
    h_assert_contains(ci_session_errmsg(NULL), path);
    ci_config_free(cfg);
    free(path);
}

static void test_a_log_ending_in_a_partial_line_is_not_appended_to(void **state)
{
    char *path = log_path("partial.log");
    ci_config *cfg = audit_config(path);
    ci_session *s = NULL;
    ci_result *r = NULL;
    size_t len;
    char *text;
    int fd;

    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    /* Another writer leaves half a line while the session lives: the next
     * cell is not run, and nothing is written after the half line. */
    fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "{\"seq\":", 7), 7);
    close(fd);
    assert_int_equal(ci_run(s, "open('ran', 'w').close()", &r), CI_EIO);
    assert_null(r);
    h_assert_contains(ci_session_errmsg(s), "incomplete line");
    assert_false(in_workspace(s, "ran"));
    ci_session_free(s);
    text = h_read_file(path, &len);
    assert_int_equal(strncmp(text + len - 8, "\n{\"seq\":", 8), 0);
    free(text);
    h_start_fails(cfg, CI_EIO, "incomplete line");
    ci_config_free(cfg);
    free(path);
}

struct runner {
    ci_session *s;
    int cells;
};

static void *run_cells(void *arg)
{
    struct runner *r = arg;
    int i;
    for (i = 0; i < r->cells; i++) {
        ci_result *res = NULL;
        assert_int_equal(ci_run(r->s, "sum(range(100))", &res), CI_OK);
        assert_int_equal(ci_result_status(res), CI_STATUS_OK);
        ci_result_free(res);
    }
    return NULL;
}

static void test_sessions_threads_and_configs_share_one_chain(void **state)
{
    char *path = log_path("shared.log");
    ci_config *cfg = audit_config(path), *other = audit_config(path);
    struct runner a = {NULL, 10}, b = {NULL, 10}, c = {NULL, 10};
    pthread_t ta, tb, tc;
    struct lines l;

    /* @other is a log object of its own on the same file, as another
     * process's would be: its lines continue the chain from the file. */
    assert_int_equal(ci_session_new(&a.s, cfg), CI_OK);
    assert_int_equal(ci_session_new(&b.s, cfg), CI_OK);
    assert_int_equal(ci_session_new(&c.s, other), CI_OK);
    assert_int_equal(pthread_create(&ta, NULL, run_cells, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, run_cells, &b), 0);
    assert_int_equal(pthread_create(&tc, NULL, run_cells, &c), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_join(tc, NULL);
    ci_session_free(a.s);
    ci_session_free(b.s);
    ci_session_free(c.s);
    ci_config_free(cfg);
    ci_config_free(other);

    l = read_log(path);
    assert_int_equal(l.n, 3 * (1 + 2 * 10 + 1));
    assert_chain(&l);
    assert_string_not_equal(str(l.doc[0], "session"), str(l.doc[1], "session"));
    free_lines(&l);
    free(path);
}

static void test_an_http_event_records_method_url_status_and_verdict(void **state)
{
    char *path = log_path("http.log"), *long_url;
    ci_session *s = audit_session(path);
    struct lines l;
    json_t *ev;

    assert_int_equal(ci_audit_http(s, "GET", "https://data.example/q?x=1", 200, 1234, 1), CI_OK);
    assert_int_equal(ci_audit_http(s, "POST", "http://evil.example/\xff", 0, 0, 0), CI_OK);
    long_url = malloc(10001);
    assert_non_null(long_url);
    memset(long_url, 'a', 10000);
    long_url[10000] = '\0';
    assert_int_equal(ci_audit_http(s, "GET", long_url, 404, 0, 1), CI_OK);
    free(long_url);
    ci_session_free(s);

    l = read_log(path);
    assert_chain(&l);
    ev = find(&l, "http", NULL, 0);
    h_assert_str(str(ev, "method"), "GET");
    h_assert_str(str(ev, "url"), "https://data.example/q?x=1");
    assert_int_equal(num(ev, "url_bytes"), 26);
    assert_int_equal(num(ev, "status"), 200);
    assert_int_equal(num(ev, "bytes"), 1234);
    assert_true(json_is_true(json_object_get(ev, "allowed")));
    ev = find(&l, "http", NULL, 1);
    h_assert_str(str(ev, "url"), "http://evil.example/\xef\xbf\xbd");
    assert_int_equal(num(ev, "status"), 0);
    assert_true(json_is_false(json_object_get(ev, "allowed")));
    ev = find(&l, "http", NULL, 2);
    assert_int_equal(strlen(str(ev, "url")), CI_AUDIT_URL_MAX);
    assert_int_equal(num(ev, "url_bytes"), 10000);
    free_lines(&l);
    free(path);
}

/* ---------------------------------------------------- codeinterp-audit */

/* Runs codeinterp-audit verify [--last @last] @path: its exit status, and
 * its stdout in *@out (malloc'ed). */
static int verify(const char *path, const char *last, char **out)
{
    char *cmd = last ? h_fmt("%s verify --last %s %s 2>&1", CI_AUDIT_TOOL, last, path)
                     : h_fmt("%s verify %s 2>&1", CI_AUDIT_TOOL, path);
    FILE *p = popen(cmd, "r");
    size_t len = 0;
    int st;

    assert_non_null(p);
    *out = calloc(1, 4096);
    assert_non_null(*out);
    len = fread(*out, 1, 4095, p);
    (*out)[len] = '\0';
    st = pclose(p);
    free(cmd);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* Asserts that verify's output @out says "@file:@said". */
static void assert_said(const char *out, const char *file, const char *said)
{
    char *want = h_fmt("%s:%s", file, said);

    h_assert_contains(out, want);
    free(want);
}

/* A real log of 1 + 2 * 4 + 1 = 10 lines. */
static struct lines real_log(const char *path)
{
    ci_session *s = audit_session(path);
    int i;

    for (i = 0; i < 4; i++) {
        char *code = h_fmt("x = %d", i);
        ci_result_free(h_run_status(s, code, CI_STATUS_OK));
        free(code);
    }
    ci_session_free(s);
    return read_log(path);
}

/* Writes @l's lines to @path in the order @order gives (-1 ends it), the
 * last one cut in half if @cut. */
static void write_lines(const char *path, const struct lines *l, const int *order, int cut)
{
    FILE *f = fopen(path, "w");
    int i;

    assert_non_null(f);
    for (i = 0; order[i] >= 0; i++) {
        const char *line = l->line[order[i]];
        if (cut && order[i + 1] < 0)
            fprintf(f, "%.*s", (int)strlen(line) / 2, line);
        else
            fprintf(f, "%s\n", line);
    }
    fclose(f);
}

static void test_verify_names_the_line_an_edit_a_removal_a_swap_or_a_cut_broke(void **state)
{
    char *path = log_path("verify.log"), *bad = log_path("verify-bad.log"), *out, last[65];
    struct lines l = real_log(path);
    int i, order[16];

    assert_int_equal(l.n, 10);
    assert_int_equal(verify(path, NULL, &out), 0);
    h_assert_contains(out, "intact: 10 lines");
    free(out);
    hex_sha256(l.line[9], strlen(l.line[9]), last);
    assert_int_equal(verify(path, last, &out), 0);
    free(out);

    for (i = 0; i < 10; i++)
        order[i] = i;
    order[10] = -1;
    /* Line 3, the first cell's end: a byte of its code's hash. */
    {
        FILE *f = fopen(bad, "w");
        for (i = 0; i < 10; i++) {
            char *line = strdup(l.line[i]), *h;
            if (i == 2 && (h = strstr(line, "\"sha256\":\"")))
                h[10] = h[10] == 'a' ? 'b' : 'a';
            fprintf(f, "%s\n", line);
            free(line);
        }
        fclose(f);
    }
    assert_int_equal(verify(bad, NULL, &out), 1);
    assert_said(out, bad, "3: edited");
    free(out);

    /* Line 5 removed: what is now line 5 is seq 6. */
    int removed[] = {0, 1, 2, 3, 5, 6, 7, 8, 9, -1};
    write_lines(bad, &l, removed, 0);
    assert_int_equal(verify(bad, NULL, &out), 1);
    assert_said(out, bad, "5: seq 6 after seq 4");
    free(out);

    /* Lines 4 and 5 swapped. */
    int swapped[] = {0, 1, 2, 4, 3, 5, 6, 7, 8, 9, -1};
    write_lines(bad, &l, swapped, 0);
    assert_int_equal(verify(bad, NULL, &out), 1);
    assert_said(out, bad, "4: seq 5 after seq 3");
    free(out);

    /* The last line cut in half. */
    write_lines(bad, &l, order, 1);
    assert_int_equal(verify(bad, NULL, &out), 1);
    assert_said(out, bad, "10: incomplete");
    free(out);

    /* The last two lines removed: only --last can tell. */
    int cut[] = {0, 1, 2, 3, 4, 5, 6, 7, -1};
    write_lines(bad, &l, cut, 0);
    assert_int_equal(verify(bad, NULL, &out), 0);
    free(out);
    assert_int_equal(verify(bad, last, &out), 1);
    assert_said(out, bad, "8: its SHA-256 is not the one given with --last");
    free(out);

    /* Not JSON at all. */
    {
        FILE *f = fopen(bad, "w");
        fprintf(f, "%s\nnot json\n", l.line[0]);
        fclose(f);
    }
    assert_int_equal(verify(bad, NULL, &out), 1);
    assert_said(out, bad, "2: not a JSON object");
    free(out);

    free(bad);
    bad = log_path("none.log");
    assert_int_equal(verify(bad, NULL, &out), 2);
    free(out);
    free_lines(&l);
    free(path);
    free(bad);
}

/* A cell's changed files are names a cell chooses: 1000 paths of 4000
 * control bytes each (24 MB as JSON) still make a cell line a chain's
 * continuation can read back, listing what fits and counting the rest. */
static void test_a_cell_line_stays_under_the_line_cap_whatever_its_file_names(void **state)
{
    char *path = log_path("names.log");
    ci_session *s = audit_session(path);
    ci_result *r = h_run_status(
        s, "import os; d = os.path.join(*['\\x01' * 254 + chr(65 + i) for i in range(14)]); "
           "os.makedirs(d); [open(os.path.join(d, '\\x01' * 240 + '%05d' % i), 'w').close() "
           "for i in range(1000)]",
        CI_STATUS_OK);
    size_t count = ci_result_file_count(r), longest = 0, listed;
    struct lines l;
    json_t *cell;

    assert_int_equal(count, 1000);
    ci_result_free(r);
    ci_session_free(s);
    l = read_log(path);
    assert_chain(&l);
    for (size_t i = 0; i < l.n; i++)
        longest = strlen(l.line[i]) > longest ? strlen(l.line[i]) : longest;
    assert_true(longest < CI_AUDIT_LINE_MAX);
    cell = find(&l, "cell", NULL, 0);
    listed = json_array_size(json_object_get(cell, "files"));
    assert_true(listed > 0 && listed < count);
    assert_int_equal(num(cell, "files_omitted"), (long long)(count - listed));
    free_lines(&l);
    free(path);
}

/* A log file another user made, or that others may write, could be read
 * and rewritten, chain and all, behind the host: no session starts on it,
 * and nothing is appended. */
static void test_a_log_others_can_write_is_refused(void **state)
{
    char *path = log_path("others.log");
    ci_config *cfg = audit_config(path);
    struct stat st;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

    assert_true(fd >= 0);
    assert_int_equal(fchmod(fd, 0666), 0);
    h_start_fails(cfg, CI_EIO, "writable by others");
    assert_int_equal(fchmod(fd, 0620), 0);
    h_start_fails(cfg, CI_EIO, "writable by others");
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_size, 0);
    if (geteuid() == 0) {
        assert_int_equal(fchmod(fd, 0600), 0);
        assert_int_equal(fchown(fd, 65534, 65534), 0);
        h_start_fails(cfg, CI_EIO, "another user's file");
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 0);
    } else {
        fprintf(stderr, "test_a_log_others_can_write_is_refused: not root, so the log of "
                "another user is not tried (no fchown)\n");
    }
    assert_int_equal(fchown(fd, geteuid(), getegid()), 0);
    assert_int_equal(fchmod(fd, 0640), 0);
    ci_session *s = NULL;
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_session_free(s);
    assert_int_equal(fstat(fd, &st), 0);
    assert_true(st.st_size > 0);
    close(fd);
    ci_config_free(cfg);
    free(path);
}

/* An exception's name is the cell's own, as long as the output limit: the
 * cell line keeps its first 1024 bytes, and stays a line a chain's
 * continuation can read back. */
static void test_a_cell_line_keeps_an_exception_name_short(void **state)
{
    char *path = log_path("ename.log");
    ci_config *cfg = h_config(&(struct h_limits){.output = 8u << 20});
    ci_session *s = NULL;
    ci_result *r;
    struct lines l;
    const char *name;

    assert_int_equal(ci_config_set_audit_log(cfg, path), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    r = h_run_status(s, "raise type('\\x01' * 3000000, (Exception,), {})()", CI_STATUS_ERROR);
    assert_int_equal(strlen(ci_result_error_name(r)), 3000000);
    ci_result_free(r);
    ci_session_free(s);
    l = read_log(path);
    assert_chain(&l);
    for (size_t i = 0; i < l.n; i++)
        assert_true(strlen(l.line[i]) < 64 * 1024);
    name = str(find(&l, "cell", NULL, 0), "error_name");
    assert_int_equal(strlen(name), CI_AUDIT_NAME_MAX);
    assert_int_equal(strspn(name, "\x01"), CI_AUDIT_NAME_MAX);
    free_lines(&l);
    free(path);
}

/* A line over CI_AUDIT_LINE_MAX is one the library will not continue a
 * chain after: verify says so, whatever the line holds. */
static void test_verify_refuses_a_line_over_the_cap(void **state)
{
    char *path = log_path("long.log"), *out;
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f, "{\"seq\":1,\"time\":\"t\",\"session\":\"s\",\"prev\":\"%s\",\"event\":\"x\","
            "\"pad\":\"", CI_AUDIT_FIRST_PREV);
    for (unsigned i = 0; i < CI_AUDIT_LINE_MAX / 4096 + 1; i++)
        fprintf(f, "%4096s", "");
    fprintf(f, "\"}\n");
    fclose(f);
    assert_int_equal(verify(path, NULL, &out), 2);
    h_assert_contains(out, "line 1: over the longest line an audit log holds");
    free(out);
    free(path);
}

static int group_setup(void **state)
{
    dir = h_tmpdir();
    return 0;
}

static int group_teardown(void **state)
{
    h_rmtree(dir);
    free(dir);
    return 0;
}

int main(void)
{
    h_watchdog(300);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_session_logs_its_start_cells_files_and_end),
        cmocka_unit_test(test_a_snapshot_and_its_restore_are_logged),
        cmocka_unit_test(test_a_host_function_call_is_logged_with_its_sizes),
        cmocka_unit_test(test_a_forbidden_syscall_logs_refusal_kill_and_restart),
        cmocka_unit_test(test_refusals_a_cell_survives_are_logged_by_kind),
        cmocka_unit_test(test_the_callback_gets_the_lines_the_file_gets),
        cmocka_unit_test(test_a_refused_event_stops_the_session_until_a_restart),
        cmocka_unit_test(test_a_failed_start_is_logged_and_keeps_its_own_message),
        cmocka_unit_test(test_an_unopenable_log_fails_the_session_with_eio),
        cmocka_unit_test(test_a_log_ending_in_a_partial_line_is_not_appended_to),
        cmocka_unit_test(test_sessions_threads_and_configs_share_one_chain),
        cmocka_unit_test(test_an_http_event_records_method_url_status_and_verdict),
        cmocka_unit_test(test_verify_names_the_line_an_edit_a_removal_a_swap_or_a_cut_broke),
        cmocka_unit_test(test_a_cell_line_stays_under_the_line_cap_whatever_its_file_names),
        cmocka_unit_test(test_a_log_others_can_write_is_refused),
        cmocka_unit_test(test_a_cell_line_keeps_an_exception_name_short),
        cmocka_unit_test(test_verify_refuses_a_line_over_the_cap),
    };
    return cmocka_run_group_tests_name("audit", tests, group_setup, group_teardown);
}
