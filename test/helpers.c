#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

/* test/cells, which the Makefile gives as an absolute path. */
#ifndef CI_TEST_CELLS
#define CI_TEST_CELLS "test/cells"
#endif

const char *h_status_name(ci_status st)
{
    switch (st) {
    case CI_STATUS_OK: return "OK";
    case CI_STATUS_ERROR: return "ERROR";
    case CI_STATUS_TIMEOUT: return "TIMEOUT";
    case CI_STATUS_MEMORY: return "MEMORY";
    case CI_STATUS_KILLED: return "KILLED";
    case CI_STATUS_INTERRUPTED: return "INTERRUPTED";
    }
    return "?";
}

static const char *orn(const char *s)
{
    return s ? s : "(null)";
}

void h_dump(const ci_result *r)
{
    size_t olen = 0, elen = 0;
    const char *o = ci_result_stdout(r, &olen);
    const char *e = ci_result_stderr(r, &elen);
    fprintf(stderr,
            "--- result: status %s, count %d, truncated %d\n"
            "    value: %.2000s\n    error: %s: %.2000s\n"
            "    traceback: %.4000s\n    stdout (%zu bytes): %.2000s\n"
            "    stderr (%zu bytes): %.2000s\n",
            h_status_name(ci_result_status(r)), ci_result_execution_count(r),
            ci_result_truncated(r), orn(ci_result_value(r)),
            orn(ci_result_error_name(r)), orn(ci_result_error_value(r)),
            orn(ci_result_traceback(r)), olen, orn(o), elen, orn(e));
}

/* Applies the settings of @lim that are not 0 to @cfg. Returns CI_OK, or
 * the first setter's error with its name in *@what. */
static int apply_limits(ci_config *cfg, const struct h_limits *lim, const char **what)
{
    int rc = CI_OK;
    if (lim->timeout_ms && (rc = ci_config_set_timeout_ms(cfg, lim->timeout_ms)) != CI_OK)
        *what = "ci_config_set_timeout_ms";
    else if (lim->grace_ms && (rc = ci_config_set_grace_ms(cfg, lim->grace_ms)) != CI_OK)
        *what = "ci_config_set_grace_ms";
    else if (lim->memory && (rc = ci_config_set_memory_limit(cfg, lim->memory)) != CI_OK)
        *what = "ci_config_set_memory_limit";
    else if (lim->output && (rc = ci_config_set_output_limit(cfg, lim->output)) != CI_OK)
        *what = "ci_config_set_output_limit";
    else if (lim->file && (rc = ci_config_set_file_limit(cfg, lim->file)) != CI_OK)
        *what = "ci_config_set_file_limit";
    else if (lim->spill &&
             (rc = ci_config_set_spill_limit(cfg, lim->spill < 0 ? 0 : (ci_uint64)lim->spill)) !=
                 CI_OK)
        *what = "ci_config_set_spill_limit";
    else if (lim->root && (rc = ci_config_set_workspace_root(cfg, lim->root)) != CI_OK)
        *what = "ci_config_set_workspace_root";
    else if (lim->inode_quota &&
             (rc = ci_config_set_inode_quota(cfg, lim->inode_quota)) != CI_OK)
        *what = "ci_config_set_inode_quota";
    else if (lim->rollback && (rc = ci_config_set_rollback(cfg, 1)) != CI_OK)
        *what = "ci_config_set_rollback";
    return rc;
}

ci_config *h_config(const struct h_limits *lim)
{
    ci_config *cfg = ci_config_new();
    assert_non_null(cfg);
    const char *what = NULL;
    int rc = lim ? apply_limits(cfg, lim, &what) : CI_OK;
    if (rc != CI_OK)
        fail_msg("%s: %d (%s)", what, rc, ci_strerror(rc));
    return cfg;
}

ci_session *h_session(const struct h_limits *lim)
{
    ci_config *cfg = h_config(lim);
    ci_session *s = NULL;
    int rc = ci_session_new(&s, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK)
        fail_msg("ci_session_new: %d (%s): %s", rc, ci_strerror(rc),
                 ci_session_errmsg(NULL));
    assert_non_null(s);
    return s;
}

/* The session h_group_session() made last. */
static ci_session *group_session;

int h_group_session(ci_session **s, const struct h_limits *lim)
{
    ci_config *cfg = ci_config_new();
    if (!cfg) {
        fprintf(stderr, "group setup: ci_config_new failed\n");
        return -1;
    }
    const char *what = "ci_session_new";
    int rc = lim ? apply_limits(cfg, lim, &what) : CI_OK;
    if (rc == CI_OK)
        rc = ci_session_new(s, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK) {
        fprintf(stderr, "group setup: %s: %d (%s): %s\n", what, rc, ci_strerror(rc),
                ci_session_errmsg(NULL));
        return -1;
    }
    group_session = *s;
    return 0;
}

int h_group_teardown(void **state)
{
    ci_session_free(group_session);
    group_session = NULL;
    return 0;
}

int h_setup_alive(void **state)
{
    h_ensure_alive(group_session);
    return 0;
}

ci_result *h_run(ci_session *s, const char *code)
{
    ci_result *r = NULL;
    int rc = ci_run(s, code, &r);
    if (rc != CI_OK)
        fail_msg("ci_run: %d (%s): %s\n  cell: %s", rc, ci_strerror(rc),
                 ci_session_errmsg(s), code);
    assert_non_null(r);
    return r;
}

ci_result *h_run_status(ci_session *s, const char *code, ci_status want)
{
    return h_run_ex_status(s, code, NULL, want);
}

ci_result *h_run_ex_status(ci_session *s, const char *code, const ci_run_options *opts,
                           ci_status want)
{
    ci_result *r = NULL;
    int rc = ci_run_ex(s, code, opts, &r);
    if (rc != CI_OK || !r)
        fail_msg("ci_run_ex: %d (%s): %s\n  cell: %s", rc, ci_strerror(rc),
                 ci_session_errmsg(s), code);
    ci_status got = ci_result_status(r);
    if (got != want) {
        h_dump(r);
        fail_msg("cell status %s, expected %s\n  cell: %s", h_status_name(got),
                 h_status_name(want), code);
    }
    return r;
}

int h_same_value(const char *v, const char *want)
{
    while (*v && *want) {
        if (v[0] == '\n' && want[0] == ' ') {
            while (*++v == ' ')
                ;
            want++;
        } else if (*v++ != *want++) {
            return 0;
        }
    }
    return *v == *want;
}

void h_expect(ci_session *s, const char *code, const char *value, const char *out)
{
    ci_result *r = h_run_status(s, code, CI_STATUS_OK);
    const char *v = ci_result_value(r);
    if (value == NULL ? v != NULL : (v == NULL || !h_same_value(v, value))) {
        h_dump(r);
        fail_msg("value %s, expected %s\n  cell: %s", orn(v), orn(value), code);
    }
    if (out) {
        size_t len = 0;
        const char *o = ci_result_stdout(r, &len);
        if (len != strlen(out) || memcmp(o, out, len) != 0) {
            h_dump(r);
            fail_msg("stdout differs, expected \"%s\"\n  cell: %s", out, code);
        }
    }
    ci_result_free(r);
}

void h_expect_error(ci_session *s, const char *code, const char *name, const char *value)
{
    ci_result *r = h_run_status(s, code, CI_STATUS_ERROR);
    const char *n = ci_result_error_name(r);
    const char *v = ci_result_error_value(r);
    if (!n || strcmp(n, name) != 0) {
        h_dump(r);
        fail_msg("error name %s, expected %s\n  cell: %s", orn(n), name, code);
    }
    if (value && (!v || strcmp(v, value) != 0)) {
        h_dump(r);
        fail_msg("error value %s, expected %s\n  cell: %s", orn(v), value, code);
    }
    if (ci_result_value(r)) {
        h_dump(r);
        fail_msg("a failed cell gave the value %s\n  cell: %s", ci_result_value(r), code);
    }
    ci_result_free(r);
}

void h_ensure_alive(ci_session *s)
{
    if (ci_session_pid(s) > 0)
        return;
    int rc = ci_session_restart(s);
    if (rc != CI_OK)
        fail_msg("ci_session_restart: %d (%s): %s", rc, ci_strerror(rc),
                 ci_session_errmsg(s));
}

static sem_t watchdog_started;

static void *watchdog_main(void *arg)
{
    int seconds = (int)(intptr_t)arg;
    struct timespec ts = {seconds, 0};
    sem_post(&watchdog_started);
    while (nanosleep(&ts, &ts) != 0)
        ;
    fprintf(stderr, "watchdog: still running after %d s, a hang; giving up\n", seconds);
    _exit(3);
}

void h_watchdog(int seconds)
{
    pthread_t t;
    sigset_t all, old;
    /* Every signal blocked on the watchdog (it inherits the mask), as on
     * the library's own threads: a signal a test sends itself reaches the
     * test's thread, never this one. Else a timer's last tick could run
     * its handler here after the test restored the default action (seen
     * under valgrind, which delivers signals late). */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    sem_init(&watchdog_started, 0, 0);
    if (pthread_create(&t, NULL, watchdog_main, (void *)(intptr_t)seconds) == 0) {
        pthread_detach(t);
        /* Started, and past anything that takes a lock: a test that forks
         * next (test_host_death) must not copy one held (ASan's allocator
         * lock, taken while a thread starts, hung such a child in CI). */
        while (sem_wait(&watchdog_started) != 0)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int64_t h_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void h_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void *interrupter_main(void *arg)
{
    struct h_interrupter *in = arg;
    h_sleep_ms(in->delay_ms);
    in->rc = ci_session_interrupt(in->s);
    return NULL;
}

void h_interrupt_later(struct h_interrupter *in, ci_session *s, int delay_ms)
{
    *in = (struct h_interrupter){.s = s, .delay_ms = delay_ms, .rc = -99};
    assert_int_equal(pthread_create(&in->thread, NULL, interrupter_main, in), 0);
}

int h_interrupter_join(struct h_interrupter *in)
{
    pthread_join(in->thread, NULL);
    return in->rc;
}

static void *runner_main(void *arg)
{
    struct h_runner *run = arg;
    ci_result *r = NULL;

    run->rc = ci_run(run->s, run->code, &r);
    ci_result_free(r);
    return NULL;
}

void h_run_later(struct h_runner *run, ci_session *s, const char *code)
{
    *run = (struct h_runner){.s = s, .code = code, .rc = -99};
    assert_int_equal(pthread_create(&run->thread, NULL, runner_main, run), 0);
}

int h_runner_join(struct h_runner *run)
{
    pthread_join(run->thread, NULL);
    return run->rc;
}

char *h_build_dir(void)
{
    char exe[4096], *slash;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    for (int i = 0; i < 2; i++) { /* build/test/test_NAME -> build */
        if (!(slash = strrchr(exe, '/')))
            return NULL;
        *slash = '\0';
    }
    return strdup(exe);
}

char *h_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    char *path = h_fmt("%s/ci-test-XXXXXX", base);
    if (!mkdtemp(path))
        fail_msg("mkdtemp %s: %s", path, strerror(errno));
    /* Searchable by others: a root test's workers run as uid 65534 and
     * must pass through a workspace root made here. Not listable. */
    if (chmod(path, 0711) != 0)
        fail_msg("chmod %s: %s", path, strerror(errno));
    return path;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (flag == FTW_DP || flag == FTW_D) {
        /* A session directory a killed host left is its quota's tmpfs,
         * still mounted (lib/quota.c): emptied above, then detached. */
        if (rmdir(path) != 0 && errno == EBUSY && umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
            rmdir(path);
    } else {
        unlink(path);
    }
    return 0;
}

/* Makes every directory under @path writable and searchable first, so a
 * cell's chmod 0 cannot stop the removal. */
static int open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    if (flag == FTW_D || flag == FTW_DNR)
        chmod(path, 0700);
    return 0;
}

char *h_dir_names(const char *path)
{
    struct dirent **list;
    int n = scandir(path, &list, NULL, alphasort);
    if (n < 0)
        fail_msg("scandir %s: %s", path, strerror(errno));
    char *out = h_fmt("%s", "");
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0) {
            char *next = h_fmt("%s%s%s", out, *out ? " " : "", list[i]->d_name);
            free(out);
            out = next;
        }
        free(list[i]);
    }
    free(list);
    return out;
}

int h_seccomp_filter(struct sock_filter *f, unsigned short len)
{
    struct sock_fprog prog = {.len = len, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
        return -1;
    return 0;
}

void h_filtered_host_(const char *test, int (*filter)(void), int (*body)(int), int arg,
                      const char *what)
{
    int st;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(filter() != 0 ? 77 : body(arg));
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        h_skip_because_(test, "this process may not install a seccomp filter");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("%s failed (wait status %#x)", what, st);
}

void h_rmtree(const char *path)
{
    if (!path)
        return;
    nftw(path, open_up, 16, FTW_PHYS);
    nftw(path, rm_one, 16, FTW_PHYS | FTW_DEPTH);
}

void h_write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        fail_msg("open %s: %s", path, strerror(errno));
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail_msg("write %s: %s", path, strerror(errno));
        p += n;
        len -= (size_t)n;
    }
    close(fd);
}

char *h_read_file(const char *path, size_t *lenp)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    if (lenp)
        *lenp = len;
    return buf;
}

char *h_cell(const char *name)
{
    char *path = h_fmt("%s/%s.py", CI_TEST_CELLS, name);
    size_t len = 0;
    char *code = h_read_file(path, &len);
    if (!code)
        fail_msg("cell %s: cannot read %s: %s", name, path, strerror(errno));
    free(path);
    while (len > 0 && code[len - 1] == '\n')
        code[--len] = '\0';
    return code;
}

char *h_cell_then(const char *first, const char *code)
{
    char *cell = h_cell(first);
    char *both = h_fmt("%s\n%s", cell, code);
    free(cell);
    return both;
}

char *h_cells(const char *first, const char *second)
{
    char *cell = h_cell(second);
    char *both = h_cell_then(first, cell);
    free(cell);
    return both;
}

void h_expect_cell(ci_session *s, const char *name, const char *value, const char *out)
{
    char *cell = h_cell(name);
    h_expect(s, cell, value, out);
    free(cell);
}

char *h_fmt(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    assert_non_null(s);
    return s;
}

int h_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t n;
        unsigned min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1, min = 0x80, c &= 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2, min = 0x800, c &= 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3, min = 0x10000, c &= 0x07;
        } else {
            return 0;
        }
        if (i + n >= len)
            return 0;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            c = (c << 6) | (s[i + k] & 0x3F);
        }
        if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
            return 0;
        i += n + 1;
    }
    return 1;
}

int h_proc_stat(int pid, char *state, int *ppid, int *sid)
{
    char path[64], buf[1024];
    int pgrp;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: skip to its end. */
    char *p = strrchr(buf, ')');
    return p && sscanf(p + 1, " %c %d %d %d", state, ppid, &pgrp, sid) == 4;
}

int h_proc_named(int pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    char *comm = h_read_file(path, NULL);
    size_t n = strlen(name);
    int yes = comm && strncmp(comm, name, n) == 0 && comm[n] == '\n';
    free(comm);
    return yes;
}

int h_is_zygote(int pid)
{
    /* Its name, or its spare's (lib/worker/zygote.c); a spare given a
     * session takes the worker's name back. */
    return h_proc_named(pid, "ci-zygote") || h_proc_named(pid, "ci-spare");
}

/* ------------------------------------------------ rich outputs, files */

static int mime_is_textual(const char *mime)
{
    size_t n = strlen(mime);
    return !strncmp(mime, "text/", 5) || !strcmp(mime, "application/json") ||
           (n >= 5 && !strcmp(mime + n - 5, "+json")) ||
           (n >= 4 && !strcmp(mime + n - 4, "+xml"));
}

void h_dump_rich(const ci_result *r)
{
    size_t n = ci_result_output_count(r);
    fprintf(stderr, "--- %zu outputs, %zu omitted, truncated mask 0x%x\n", n,
            ci_result_outputs_omitted(r), (unsigned)ci_result_truncated(r));
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        const char *mime = ci_result_output_mime(r, i);
        const char *data = ci_result_output_data(r, i, &len);
        fprintf(stderr, "    [%zu] message %zu, type %d, display id %s, wait %d, %s, %zu bytes",
                i, ci_result_output_message(r, i), (int)ci_result_output_type(r, i),
                orn(ci_result_output_display_id(r, i)), ci_result_output_wait(r, i), orn(mime),
                len);
        if (mime && data && mime_is_textual(mime))
            fprintf(stderr, ": %.300s", data);
        fputc('\n', stderr);
    }
    n = ci_result_file_count(r);
    fprintf(stderr, "--- %zu changed files\n", n);
    for (size_t i = 0; i < n && i < 50; i++)
        fprintf(stderr, "    %s\n", orn(ci_result_file_name(r, i)));
    fprintf(stderr, "--- wall %llu us, cpu %llu us, peak memory %llu bytes\n",
            ci_result_wall_time_us(r), ci_result_cpu_time_us(r), ci_result_peak_memory(r));
}

size_t h_count_mime(const ci_result *r, const char *mime)
{
    size_t k = 0, n = ci_result_output_count(r);
    for (size_t i = 0; i < n; i++) {
        const char *m = ci_result_output_mime(r, i);
        if (m && !strcmp(m, mime))
            k++;
    }
    return k;
}

size_t h_find_mime(const ci_result *r, const char *mime, size_t nth)
{
    size_t n = ci_result_output_count(r), seen = 0;
    for (size_t i = 0; i < n; i++) {
        const char *m = ci_result_output_mime(r, i);
        if (m && !strcmp(m, mime) && seen++ == nth)
            return i;
    }
    h_dump(r);
    h_dump_rich(r);
    fail_msg("no output of type %s (number %zu)", mime, nth);
    return (size_t)-1;
}

void h_assert_output(const ci_result *r, size_t i, const char *mime, const char *data,
                     ci_output_type type, size_t message)
{
    size_t len = 12345;
    const char *m = ci_result_output_mime(r, i);
    const char *d = ci_result_output_data(r, i, &len);
    if (i >= ci_result_output_count(r) || !m || !d || strcmp(m, mime) != 0 ||
        ci_result_output_type(r, i) != type || ci_result_output_message(r, i) != message ||
        (data && (len != strlen(data) || memcmp(d, data, len) != 0)) || d[len] != '\0') {
        h_dump(r);
        h_dump_rich(r);
        fail_msg("output %zu: expected %s, type %d, message %zu, data \"%.300s\"", i, mime,
                 (int)type, message, data ? data : "(not checked)");
    }
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void h_png_size(const ci_result *r, size_t i, uint32_t *width, uint32_t *height)
{
    size_t len = 0;
    const unsigned char *d = ci_result_output_data(r, i, &len);
    const char *m = ci_result_output_mime(r, i);
    if (!m || strcmp(m, "image/png") != 0 || !d || len < 33 ||
        memcmp(d, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(d + 12, "IHDR", 4) != 0) {
        h_dump_rich(r);
        fail_msg("output %zu is not a PNG image", i);
    }
    *width = be32(d + 16);
    *height = be32(d + 20);
}

/* A spare of a zygote: named so, or still the zygote's name in its group. */
static int is_spare(int pid)
{
    return h_proc_named(pid, "ci-spare") || (h_proc_named(pid, "ci-zygote") && getpgid(pid) != pid);
}

static int count_children(int ppid, int *zombies, int verbose, int but_spares)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0, z = 0;
    assert_non_null(d);
    while ((e = readdir(d))) {
        char st;
        int pp, sid, pid = atoi(e->d_name);
        if (pid <= 0 || !h_proc_stat(pid, &st, &pp, &sid) || pp != ppid ||
            (but_spares && is_spare(pid)))
            continue;
        n++;
        z += st == 'Z';
        if (verbose) {
            char *path = h_fmt("/proc/%d/comm", pid);
            char *comm = h_read_file(path, NULL);
            fprintf(stderr, "  process %d (state %c, parent %d) %s", pid, st, ppid,
                    comm ? comm : "?\n");
            free(comm);
            free(path);
        }
    }
    closedir(d);
    if (zombies)
        *zombies = z;
    return n;
}

void h_start_fails(const ci_config *cfg, int rc, const char *why)
{
    ci_session *s = NULL;
    int got = ci_session_new(&s, cfg);

    if (got != rc)
        fail_msg("ci_session_new gave %d (%s), not %d; message: %s", got, ci_strerror(got), rc,
                 ci_session_errmsg(NULL));
    assert_null(s);
    h_assert_contains(ci_session_errmsg(NULL), why);
}

const char *h_kill_listed_cell(void)
{
#if defined(__x86_64__)
    return "import ctypes\nctypes.CDLL(None).syscall(101, 0, 0, 0, 0)";
#elif defined(__aarch64__)
    return "import ctypes\nctypes.CDLL(None).syscall(117, 0, 0, 0, 0)";
#else
    h_skip_because("no kill-listed system call number written for this architecture");
    return "";
#endif
}

int h_children(int ppid, int *zombies, int verbose)
{
    return count_children(ppid, zombies, verbose, 0);
}

int h_children_but_spares(int ppid)
{
    return count_children(ppid, NULL, 0, 1);
}

void h_assert_cut(const ci_result *r, int stream, size_t limit)
{
    size_t len = 0;
    const char *o = stream == CI_STREAM_STDOUT ? ci_result_stdout(r, &len)
                                               : ci_result_stderr(r, &len);
    int bit = stream == CI_STREAM_STDOUT ? CI_TRUNCATED_STDOUT : CI_TRUNCATED_STDERR;
    if (len <= limit || len > limit + 400 || !strstr(o, "passed the output limit of") ||
        !(ci_result_truncated(r) & bit))
        fail_msg("stream %d is not cut at %zu: %zu bytes, truncated %#x, \"%.200s\"", stream,
                 limit, len, (unsigned)ci_result_truncated(r), o);
}

int h_wait_reaped(int pid, int ms)
{
    char st;
    int ppid, sid;
    for (int64_t end = h_now_ms() + ms;; ) {
        if (!h_proc_stat(pid, &st, &ppid, &sid) || ppid != getpid())
            return 1;
        if (h_now_ms() >= end)
            return 0;
        usleep(10000);
    }
}

char *h_worker_string(ci_session *s, const char *expr)
{
    ci_result *r = h_run_status(s, expr, CI_STATUS_OK);
    const char *v = ci_result_value(r);
    assert_non_null(v);
    char *text = h_fmt("%.*s", (int)strlen(v) - 2, v + 1);
    ci_result_free(r);
    return text;
}
