/*
 * What a model reads of a stream that passed the output limit: its head
 * and its tail with one marker line between them that counts what was left
 * out, and the whole stream in a spill file of the workspace. The group's
 * session keeps 4096 bytes of each stream (a head and a tail of 2048).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "helpers.h"

#define LIMIT 4096
#define HALF (LIMIT / 2)

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, &(struct h_limits){.output = LIMIT});
}

/* A cut stream, taken apart. */
struct cut {
    /* Into the result's text; a head that does not end a line is followed
     * by a line break before the marker, counted in head_len. */
    const char *head, *marker, *tail;
    size_t head_len, marker_len, tail_len;
    unsigned long long bytes, lines; /* the marker's counts */
    char where[200];                 /* the marker after "limit of 4 KiB; " */
};

static struct cut take_apart(const char *text, size_t len, const char *stream)
{
    struct cut c = {0};
    char want[96];
    const char *m = strstr(text, "[... "), *end;
    int used = 0;

    if (!m)
        fail_msg("no marker line in %zu bytes: \"%.300s\"", len, text);
    end = strchr(m, '\n');
    assert_non_null(end);
    c.head = text;
    c.head_len = (size_t)(m - text);
    c.marker = m;
    c.marker_len = (size_t)(end + 1 - m);
    c.tail = end + 1;
    c.tail_len = len - (size_t)(c.tail - text);
    if (sscanf(m, "[... %llu byte%*[s] (%llu line%*[s]) left out: %n", &c.bytes, &c.lines,
               &used) < 2 ||
        used == 0)
        fail_msg("marker does not count bytes and lines: \"%.*s\"", (int)c.marker_len, m);
    snprintf(want, sizeof want, "%s passed the output limit of 4 KiB; ", stream);
    if (strncmp(m + used, want, strlen(want)) != 0)
        fail_msg("marker does not name the stream and the limit: \"%.*s\"", (int)c.marker_len, m);
    /* Less the closing " ...]" and the line break. */
    snprintf(c.where, sizeof c.where, "%.*s", (int)(c.marker_len - used - strlen(want) - 6),
             m + used + strlen(want));
    return c;
}

static unsigned long long lines_in(const char *p, size_t n)
{
    unsigned long long k = 0;
    for (size_t i = 0; i < n; i++)
        k += p[i] == '\n';
    return k;
}

/* The text of `for i in range(n): print('row', i)`. */
static char *rows(int n, size_t *len)
{
    size_t cap = (size_t)n * 12 + 1, used = 0;
    char *p = malloc(cap);
    assert_non_null(p);
    for (int i = 0; i < n; i++)
        used += (size_t)snprintf(p + used, cap - used, "row %d\n", i);
    *len = used;
    return p;
}

static void assert_file_is(const char *name, const char *want, size_t want_len)
{
    void *data = NULL;
    size_t len = 0;
    int rc = ci_session_get_file(S, name, &data, &len);
    if (rc != CI_OK)
        fail_msg("ci_session_get_file(%s): %d: %s", name, rc, ci_session_errmsg(S));
    if (len != want_len || memcmp(data, want, len) != 0)
        fail_msg("%s holds %zu bytes, expected %zu", name, len, want_len);
    free(data);
}

static void test_200000_lines_keep_head_tail_and_the_whole(void **state)
{
    size_t full_len;
    char *full = rows(200000, &full_len);
    ci_result *r = h_run_status(S, "for i in range(200000): print('row', i)", CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    char spill[64];
    struct cut c = take_apart(o, len, "stdout");

    /* What a model reads: the first and the last line, whole lines. */
    assert_memory_equal(o, "row 0\nrow 1\n", 12);
    assert_true(len > 11 && memcmp(o + len - 11, "row 199999\n", 11) == 0);
    assert_true(c.head_len <= HALF && c.head_len >= HALF - HALF / 4);
    assert_true(c.tail_len <= HALF && c.tail_len >= HALF - HALF / 4);
    assert_int_equal(c.head[c.head_len - 1], '\n');
    assert_memory_equal(c.head, full, c.head_len);
    assert_memory_equal(c.tail, full + full_len - c.tail_len, c.tail_len);
    assert_memory_equal(c.tail, "row ", 4); /* starts a line */
    /* The counts are what lies between. */
    assert_int_equal(c.bytes, full_len - c.head_len - c.tail_len);
    assert_int_equal(c.lines, 200000 - lines_in(c.head, c.head_len) - lines_in(c.tail, c.tail_len));
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_STDOUT);
    assert_false(ci_result_truncated(r) & CI_TRUNCATED_STDERR);
    /* The host is told where the marker is and what it counts. */
    size_t at = 1, mlen = 1;
    ci_uint64 bytes = 1, lines = 1;
    assert_int_equal(ci_result_cut(r, CI_STREAM_STDOUT, &at, &mlen, &bytes, &lines), 1);
    assert_int_equal(at, c.head_len);
    assert_int_equal(mlen, c.marker_len);
    assert_int_equal(bytes, c.bytes);
    assert_int_equal(lines, c.lines);
    assert_int_equal(ci_result_cut(r, CI_STREAM_STDERR, &at, &mlen, &bytes, &lines), 0);
    assert_true(at == 0 && mlen == 0 && bytes == 0 && lines == 0);
    assert_int_equal(ci_result_cut(r, 7, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(ci_result_cut(NULL, CI_STREAM_STDOUT, NULL, NULL, NULL, NULL), 0);
    /* The whole is in the spill file the marker names. */
    snprintf(spill, sizeof spill, ".outputs/cell-%d.stdout", ci_result_execution_count(r));
    int whole = -1;
    h_assert_str(ci_result_spill_file(r, CI_STREAM_STDOUT, &whole), spill);
    assert_int_equal(whole, 1);
    assert_null(ci_result_spill_file(r, CI_STREAM_STDERR, &whole));
    assert_int_equal(whole, 0);
    assert_null(ci_result_spill_file(r, 0, NULL));
    assert_null(ci_result_spill_file(NULL, CI_STREAM_STDOUT, NULL));
    h_assert_str(c.where, strcat(strcpy((char[96]){0}, "the whole output is in "), spill));
    assert_file_is(spill, full, full_len);
    ci_result_free(r);

    /* The next cell reads it. */
    char cell[160];
    snprintf(cell, sizeof cell, "open(%s%s%s).read().splitlines()[-1]", "'", spill, "'");
    h_expect(S, cell, "'row 199999'", NULL);
    free(full);
}

static void test_one_byte_over_gives_head_marker_tail(void **state)
{
    ci_result *r = h_run_status(S, "import sys\nsys.stdout.write('q' * 4097);", CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    char want[LIMIT + 400];
    int n;
    memset(want, 'q', HALF);
    n = HALF + snprintf(want + HALF, sizeof want - HALF,
                        "\n[... 1 byte (0 lines) left out: stdout passed the output limit of "
                        "4 KiB; the whole output is in .outputs/cell-%d.stdout ...]\n",
                        ci_result_execution_count(r));
    memset(want + n, 'q', HALF);
    n += HALF;
    assert_int_equal(len, (size_t)n);
    assert_memory_equal(o, want, len);
    assert_int_equal(o[len], '\0');
    ci_result_free(r);
}

static void test_stderr_is_cut_and_kept_apart(void **state)
{
    ci_result *r = h_run_status(S,
                                "import sys\nsys.stderr.write('e' * 10000 + '\\nlast\\n')\n"
                                "print('small')",
                                CI_STATUS_OK);
    size_t len = 0;
    const char *e = ci_result_stderr(r, &len);
    struct cut c = take_apart(e, len, "stderr");
    char spill[64];

    assert_true(c.tail_len >= 5 && memcmp(c.tail + c.tail_len - 5, "last\n", 5) == 0);
    /* The head, 2048 e's, is followed by a line break of the marker's. */
    assert_int_equal(c.head_len, HALF + 1);
    assert_int_equal(c.bytes, 10006 - HALF - c.tail_len);
    snprintf(spill, sizeof spill, ".outputs/cell-%d.stderr", ci_result_execution_count(r));
    h_assert_str(ci_result_spill_file(r, CI_STREAM_STDERR, NULL), spill);
    assert_null(ci_result_spill_file(r, CI_STREAM_STDOUT, NULL));
    h_assert_str(ci_result_stdout(r, NULL), "small\n");
    assert_int_equal(ci_result_truncated(r) & (CI_TRUNCATED_STDOUT | CI_TRUNCATED_STDERR),
                     CI_TRUNCATED_STDERR);
    ci_result_free(r);
}

static void test_a_marker_the_cell_prints_is_not_a_cut(void **state)
{
    ci_result *r = h_run_status(S,
                                "print('[... 5 bytes (1 line) left out: stdout passed the output "
                                "limit of 4 KiB; the whole output is in /etc/passwd ...]')",
                                CI_STATUS_OK);
    assert_int_equal(ci_result_cut(r, CI_STREAM_STDOUT, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(ci_result_truncated(r), 0);
    assert_null(ci_result_spill_file(r, CI_STREAM_STDOUT, NULL));
    ci_result_free(r);
}

static int valid_utf8(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = p[i] < 0x80 ? 1 : p[i] >= 0xF0 ? 4 : p[i] >= 0xE0 ? 3 : p[i] >= 0xC2 ? 2 : 0;
        if (k == 0 || i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((p[i + j] & 0xC0) != 0x80)
                return 0;
        i += k;
    }
    return 1;
}

static void test_cut_text_is_whole_characters(void **state)
{
    /* Two-byte characters with one ASCII byte before them: the head's and
     * the tail's byte cuts would both fall inside a character. */
    ci_result *r = h_run_status(S, "import sys\nsys.stdout.write('a' + '\\u00e9' * 3000 + 'z');",
                                CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    struct cut c = take_apart(o, len, "stdout");
    assert_true(valid_utf8((const unsigned char *)o, len));
    assert_int_equal(c.head_len, HALF - 1 + 1); /* and the marker's line break */
    assert_int_equal(c.tail_len, HALF - 1);
    assert_int_equal(c.bytes, 6002 - (HALF - 1) - c.tail_len);
    ci_result_free(r);
}

static void test_without_spill_files_the_marker_says_so(void **state)
{
    ci_session *s = h_session(&(struct h_limits){.output = LIMIT, .spill = -1});
    ci_result *r = h_run_status(s, "print('x' * 9000)", CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    struct cut c = take_apart(o, len, "stdout");
    h_assert_str(c.where, "the rest was not kept");
    assert_null(ci_result_spill_file(r, CI_STREAM_STDOUT, NULL));
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_STDOUT);
    ci_result_free(r);
    h_expect(s, "import os; os.path.exists('.outputs')", "False", NULL);
    ci_session_free(s);
}

static void test_spill_file_stops_at_its_limit(void **state)
{
    ci_session *s = h_session(&(struct h_limits){.output = LIMIT, .spill = 8192});
    ci_result *r = h_run_status(s, "print('x' * 20000)", CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    struct cut c = take_apart(o, len, "stdout");
    h_assert_str(c.where, "its first 8 KiB are in .outputs/cell-1.stdout");
    int whole = -1;
    h_assert_str(ci_result_spill_file(r, CI_STREAM_STDOUT, &whole), ".outputs/cell-1.stdout");
    assert_int_equal(whole, 0);
    /* The tail is still the stream's end, beyond the spill file's. */
    assert_int_equal(c.tail[c.tail_len - 1], '\n');
    assert_int_equal(c.bytes, 20001 - (c.head_len - 1) - c.tail_len);
    ci_result_free(r);
    h_expect(s, "import os; os.path.getsize('.outputs/cell-1.stdout')", "8192", NULL);
    ci_session_free(s);
}

static void test_session_keeps_its_last_eight_spill_files(void **state)
{
    ci_session *s = h_session(&(struct h_limits){.output = LIMIT});
    for (int i = 0; i < 10; i++)
        ci_result_free(h_run_status(s, "print('y' * 5000)", CI_STATUS_OK));
    /* The listing cell is cell 11. */
    h_expect(s, "import os; sorted(os.listdir('.outputs'), key=lambda n: int(n[5:-7]))",
             "['cell-3.stdout', 'cell-4.stdout', 'cell-5.stdout', 'cell-6.stdout', "
             "'cell-7.stdout', 'cell-8.stdout', 'cell-9.stdout', 'cell-10.stdout']",
             NULL);
    ci_session_free(s);
}

/* A small filesystem of this program's own: a tmpfs of 4 MiB mounted in
 * a mount namespace that main() makes before any thread exists, so the
 * machine's disk is never filled; NULL where the kernel refuses. */
static char *small_fs;

static void mount_small_fs(void)
{
    char *dir = h_tmpdir();
    if (unshare(CLONE_NEWNS) == 0 && mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
        mount("tmpfs", dir, "tmpfs", 0, "size=4m,mode=0755") == 0) {
        small_fs = dir;
        return;
    }
    printf("no tmpfs of this test's own (%s): the disk test will be skipped\n", strerror(errno));
    rmdir(dir);
    free(dir);
}

/* A cell that leaves 1 MiB free and then prints 2 MiB: the host writes no
 * spill file that would take more than half of what is left, and says
 * so; the space stays for the cell's own files and other sessions. */
static void test_a_spill_file_leaves_the_disk_to_others(void **state)
{
    struct statvfs fs;
    const char *o;
    ci_result *r;
    ci_session *s;

    if (!small_fs) {
        printf("SKIPPED: no mount namespace with a tmpfs of this test's own\n");
        skip();
    }
    /* Without a disk quota: with one, the session's directory would be a
     * tmpfs of its own rather than on the small filesystem. */
    ci_config *cfg = h_config(&(struct h_limits){.output = LIMIT, .root = small_fs});
    assert_int_equal(ci_config_set_disk_quota(cfg, 0), CI_OK);
    assert_int_equal(ci_session_new(&s, cfg), CI_OK);
    ci_config_free(cfg);
    h_expect(s, "open('filler', 'wb').write(b'f' * (3 << 20))", "3145728", NULL);
    r = h_run_status(s, "import os\nfor _ in range(32): os.write(1, b'x' * 65536)", CI_STATUS_OK);
    o = ci_result_stdout(r, NULL);
    h_assert_str(take_apart(o, strlen(o), "stdout").where,
                 "the whole output could not be kept (No space left on device)");
    assert_null(ci_result_spill_file(r, CI_STREAM_STDOUT, NULL));
    ci_result_free(r);
    assert_int_equal(statvfs(small_fs, &fs), 0);
    if ((unsigned long long)fs.f_bavail * fs.f_frsize < 512 * 1024)
        fail_msg("%llu bytes left", (unsigned long long)fs.f_bavail * fs.f_frsize);
    /* What is left is the cell's. */
    h_expect(s, "open('more', 'wb').write(b'm' * (512 << 10))", "524288", NULL);
    ci_session_free(s);
}

/* Links a cell cannot make (symlink is refused in the sandbox) but the
 * host must not trust the workspace to lack: planted here from outside. */
static void test_a_planted_link_is_never_written_through(void **state)
{
    ci_session *s = h_session(&(struct h_limits){.output = LIMIT});
    const char *ws = ci_session_workspace(s);
    char path[4096], target[4096];
    ci_result *r;
    size_t len = 0;
    const char *o;

    /* .outputs a link to a directory: refused, nothing written there. */
    h_expect(s, "import os, tempfile; d = tempfile.mkdtemp()", NULL, NULL);
    snprintf(path, sizeof path, "%s/.outputs", ws);
    snprintf(target, sizeof target, "%s/../tmp", ws);
    assert_int_equal(symlink(target, path), 0);
    r = h_run_status(s, "print('x' * 9000)", CI_STATUS_OK);
    o = ci_result_stdout(r, &len);
    h_assert_str(take_apart(o, len, "stdout").where,
                 "the whole output could not be kept (Too many levels of symbolic links)");
    assert_null(ci_result_spill_file(r, CI_STREAM_STDOUT, NULL));
    ci_result_free(r);
    h_expect(s, "[n for n in os.listdir(os.path.dirname(d)) if n != os.path.basename(d)]", "[]",
             NULL);

    /* The file's own name a link to a file of the cell's: replaced, the
     * file it pointed at untouched. */
    assert_int_equal(unlink(path), 0);
    h_expect(s, "os.mkdir('.outputs'); open('mine.txt', 'w').write('mine')", "4", NULL);
    snprintf(path, sizeof path, "%s/.outputs/cell-5.stdout", ws);
    assert_int_equal(symlink("../mine.txt", path), 0);
    r = h_run_status(s, "print('z' * 9000)", CI_STATUS_OK);
    assert_int_equal(ci_result_execution_count(r), 5);
    h_assert_str(ci_result_spill_file(r, CI_STREAM_STDOUT, NULL), ".outputs/cell-5.stdout");
    ci_result_free(r);
    h_expect(s,
             "(open('mine.txt').read(), os.path.islink('.outputs/cell-5.stdout'), "
             "os.path.getsize('.outputs/cell-5.stdout'))",
             "('mine', False, 9001)", NULL);
    ci_session_free(s);
}

int main(void)
{
    mount_small_fs();
    h_watchdog(180);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_200000_lines_keep_head_tail_and_the_whole, h_setup_alive),
        cmocka_unit_test_setup(test_one_byte_over_gives_head_marker_tail, h_setup_alive),
        cmocka_unit_test_setup(test_stderr_is_cut_and_kept_apart, h_setup_alive),
        cmocka_unit_test_setup(test_cut_text_is_whole_characters, h_setup_alive),
        cmocka_unit_test_setup(test_a_marker_the_cell_prints_is_not_a_cut, h_setup_alive),
        cmocka_unit_test(test_without_spill_files_the_marker_says_so),
        cmocka_unit_test(test_spill_file_stops_at_its_limit),
        cmocka_unit_test(test_session_keeps_its_last_eight_spill_files),
        cmocka_unit_test(test_a_spill_file_leaves_the_disk_to_others),
        cmocka_unit_test(test_a_planted_link_is_never_written_through),
    };
    int failed = cmocka_run_group_tests_name("cut", tests, group_setup, h_group_teardown);
    if (small_fs && umount2(small_fs, MNT_DETACH) == 0)
        rmdir(small_fs);
    free(small_fs);
    return failed;
}
