/*
 * Small helpers shared by the test programs: start a session with a few
 * settings, run a cell and check its fate, make and remove test-owned
 * temporary directories. Every helper fails the current cmocka test (it
 * never returns a half-valid object) and prints what the cell did first,
 * so a failure says why; the group fixtures below are the exception, as
 * cmocka wants a group setup to return, not fail.
 */
#ifndef CI_TEST_HELPERS_H
#define CI_TEST_HELPERS_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
/* cmocka.h needs the three above. */
#include <cmocka.h>

#include "codeinterp.h"

/* Settings for h_config(); 0 keeps the library default. */
struct h_limits {
    unsigned long timeout_ms;
    unsigned long grace_ms;
    unsigned long long memory;
    size_t output;
    unsigned long long file;
    long long spill; /* ci_config_set_spill_limit; 0: default, -1: none */
    unsigned long long inode_quota;
    const char *root;
    int rollback; /* 1: ci_config_set_rollback */
};

/* A config with @lim applied (NULL: all defaults); asserts each setter. */
ci_config *h_config(const struct h_limits *lim);

/* A new session with @lim (NULL: defaults); asserts CI_OK. */
ci_session *h_session(const struct h_limits *lim);

/*
 * The group's session: a test program whose tests share one session makes
 * it in its group setup with h_group_session(), passes h_group_teardown to
 * cmocka_run_group_tests_name() (or calls it from a teardown of its own),
 * and gives each test that needs a live worker h_setup_alive as setup.
 */

/* Starts *@s with @lim (NULL: defaults) and makes it the group's session.
 * Does not assert: on failure prints why to stderr and returns -1; 0 on
 * success. */
int h_group_session(ci_session **s, const struct h_limits *lim);

/* Frees the group's session; always 0. */
int h_group_teardown(void **state);

/* h_ensure_alive() on the group's session: a test before may have killed
 * its worker. Always 0. */
int h_setup_alive(void **state);

/* The str value of @expr run in @s, without repr's quotes (a path, a
 * name as the worker sees it); malloc'ed. Asserts the cell succeeds. */
char *h_worker_string(ci_session *s, const char *expr);

/* Asserts that @r's stream (CI_STREAM_STDOUT or _STDERR) was cut at the
 * output limit @limit: its head and tail, with the marker line between
 * them, at most @limit + 400 bytes, and the truncation bit set. */
void h_assert_cut(const ci_result *r, int stream, size_t limit);

/* Runs @code, asserts ci_run returned CI_OK with a result. */
ci_result *h_run(ci_session *s, const char *code);

/* Like h_run, and asserts the status, printing the result if it differs. */
ci_result *h_run_status(ci_session *s, const char *code, ci_status want);

/* h_run_status() through ci_run_ex() with @opts. */
ci_result *h_run_ex_status(ci_session *s, const char *code, const ci_run_options *opts,
                           ci_status want);

/* Whether @v, the text/plain of a value, is @want written on one line:
 * IPython's pretty printer breaks a long list, tuple or dict after a
 * ", " into ",\n" and an indent, which only ever stands between items. */
int h_same_value(const char *v, const char *want);

/* Runs @code, asserts CI_STATUS_OK and that the value is @value (NULL: no
 * value; one that IPython's pretty printer spread over lines matches
 * @value written on one) and stdout is @out (NULL: not checked). Frees
 * the result. */
void h_expect(ci_session *s, const char *code, const char *value, const char *out);

/* Runs @code, asserts CI_STATUS_ERROR, that the exception is named @name,
 * that its message is @value (NULL: not checked) and that the cell gave
 * no value. Frees the result. */
void h_expect_error(ci_session *s, const char *code, const char *name, const char *value);

/* Prints everything a result holds, to stderr, for a failing test. */
void h_dump(const ci_result *r);

/* Restarts @s if its worker is dead; asserts the restart succeeded. */
void h_ensure_alive(ci_session *s);

/* Ends the program with a message if it is still running after @seconds:
 * a hang fails fast instead of using up make check's time. */
void h_watchdog(int seconds);

/* Milliseconds on the monotonic clock. */
int64_t h_now_ms(void);

/* Sleeps @ms milliseconds, whatever signals come. */
void h_sleep_ms(int ms);

/* A thread that calls ci_session_interrupt(@s) after @delay_ms:
 * h_interrupt_later() starts it (asserting it started), h_interrupter_join()
 * waits for it and returns what ci_session_interrupt() returned. */
struct h_interrupter {
    ci_session *s;
    int delay_ms, rc;
    pthread_t thread;
};
void h_interrupt_later(struct h_interrupter *in, ci_session *s, int delay_ms);
int h_interrupter_join(struct h_interrupter *in);

/* A thread that runs @code on @s with ci_run(): h_run_later() starts it
 * (asserting it started), h_runner_join() waits for it and returns what
 * ci_run() returned (the result is freed). @code must outlive the run. */
struct h_runner {
    ci_session *s;
    const char *code;
    int rc;
    pthread_t thread;
};
void h_run_later(struct h_runner *run, ci_session *s, const char *code);
int h_runner_join(struct h_runner *run);

/* mkdtemp under $TMPDIR or /tmp, then mode 0711 (a root test's workers,
 * uid 65534, must pass through it); a malloc'ed path. */
char *h_tmpdir(void);
/* The build directory this test program was built in: build/ for
 * build/test/test_NAME, found from /proc/self/exe; malloc'ed, or NULL if
 * that cannot be read. */
char *h_build_dir(void);
/* The names in the directory @path but . and .., sorted and joined by
 * spaces; malloc'ed. Asserts it can be listed. */
char *h_dir_names(const char *path);
/* Installs the seccomp filter of the @len instructions at @f on this
 * thread (and what it starts), after PR_SET_NO_NEW_PRIVS; 0, or -1 if
 * this process may not. */
struct sock_filter;
int h_seccomp_filter(struct sock_filter *f, unsigned short len);

/*
 * A host in a container that refuses something: forks a child that
 * installs the seccomp filter of @filter (0, or nonzero if this process
 * may not, and the test is skipped) and exits with @body(@arg), which
 * says why on stderr when it fails; asserts that exit is 0, naming the
 * case @what. @test is the caller's __func__.
 */
void h_filtered_host_(const char *test, int (*filter)(void), int (*body)(int), int arg,
                      const char *what);
#define h_filtered_host(filter, body, arg, what)                                  \
    h_filtered_host_(__func__, (filter), (body), (arg), (what))

/* rm -rf @path without following links (nftw FTW_PHYS), detaching the
 * session tmpfs a killed host left mounted in it; NULL is a no-op. */
void h_rmtree(const char *path);

/* Writes @len bytes of @data to @path (created 0600), asserts success. */
void h_write_file(const char *path, const void *data, size_t len);
/* Reads @path into a malloc'ed, NUL-terminated buffer; NULL if it cannot. */
char *h_read_file(const char *path, size_t *len);

/* The cell test/cells/@name.py (CI_TEST_CELLS, the Makefile's absolute
 * path to test/cells), without its last newlines; malloc'ed. Fails the
 * test if it cannot be read. A cell that needs a value known only at run
 * time (a path, a port) names it in capitals, and the test puts a line
 * assigning it before the cell; check-python-sources lints the cells
 * with those names, and those a cell run before defines, as builtins
 * (CELL_NAMES in the Makefile). */
char *h_cell(const char *name);
/* The cell @first, a newline, then @code (h_cell_then) or the cell
 * @second (h_cells): for a cell that uses what @first defines;
 * malloc'ed. */
char *h_cell_then(const char *first, const char *code);
char *h_cells(const char *first, const char *second);
/* h_expect() of the cell @name. */
void h_expect_cell(ci_session *s, const char *name, const char *value, const char *out);

/* The state, parent and session of process @pid from /proc/@pid/stat;
 * 1, or 0 when the process is gone. */
int h_proc_stat(int pid, char *state, int *ppid, int *sid);

/* Waits up to @ms for @pid to be reaped (gone, or no longer our child):
 * ci_run() reports a killed worker at once but leaves one that is slow to
 * die (a big address space, a loaded machine) to the library's reaper.
 * 1 once it is, 0 if it is still our child then. */
int h_wait_reaped(int pid, int ms);

/* 1 if process @pid is named @name (its /proc/PID/comm). */
int h_proc_named(int pid, const char *name);

/* 1 if process @pid is a codeinterp zygote or its spare child (named
 * "ci-zygote", "ci-spare"): children of the host that live as long as it,
 * not a session's worker (yet). */
int h_is_zygote(int pid);

/* How many processes have @ppid as their parent, and how many of those
 * are zombies (@zombies may be NULL); each is listed on stderr if
 * @verbose. */
int h_children(int ppid, int *zombies, int verbose);

/* h_children() but for the spares a zygote forks when it will (named
 * ci-spare, or still ci-zygote in their zygote's process group): what a
 * refused start must not leave. */
int h_children_but_spares(int ppid);

/* snprintf into a malloc'ed string. */
char *h_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* 1 if @s[0..len) is valid UTF-8. */
int h_utf8_valid(const char *s, size_t len);

/* ci_session_new() with @cfg must fail with @rc, leave no session, and
 * say @why in its message. */
void h_start_fails(const ci_config *cfg, int rc, const char *why);

/* A cell that makes ptrace(2), a system call the seccomp filter kills
 * the worker for; skips the test on an architecture without its number
 * written here. */
const char *h_kill_listed_cell(void);

/* A status's name, for messages. */
const char *h_status_name(ci_status st);

#define h_assert_str(a, b) assert_string_equal((a) ? (a) : "(null)", (b))
#define h_assert_contains(hay, needle)                                        \
    do {                                                                      \
        const char *h_hay_ = (hay);                                           \
        if (!h_hay_ || !strstr(h_hay_, (needle))) {                           \
            fail_msg("expected \"%s\" in \"%s\"", (needle), h_hay_ ? h_hay_ : "(null)"); \
        }                                                                     \
    } while (0)
#define h_assert_not_contains(hay, needle)                                    \
    do {                                                                      \
        const char *h_hay_ = (hay);                                           \
        if (h_hay_ && strstr(h_hay_, (needle))) {                             \
            fail_msg("did not expect \"%s\" in \"%s\"", (needle), h_hay_);    \
        }                                                                     \
    } while (0)

/* ------------------------------------- what this machine lets a worker have */

/*
 * test/probe.c asks the kernel, in forked children and the way the worker
 * asks, for each layer the worker tries to get, so that a test asserts
 * that ci_session_sandbox() reports what the kernel and the container
 * around this process allowed, and skips only the checks that need a
 * layer the probe says is missing.
 */
struct h_probe {
    unsigned layers;  /* the CI_SANDBOX_* bits a worker can get here */
    unsigned unknown; /* bits the probe cannot tell (Landlock under valgrind) */
    int landlock;     /* the Landlock ABI, 0 for none */
    int own_proc;     /* a PID-namespaced worker can mount a proc of its own */
    int broken;       /* a step the worker dies of failed: no worker starts */
    int zygote;       /* probed for a zygote-forked worker, else exec-started */
};

/* The probe for a worker forked from the zygote (@zygote 1) or started
 * by exec (0); asked once per program. */
const struct h_probe *h_probe(int zygote);

/* 1 if a session of a default config gets a zygote-forked worker: the
 * zygote is on unless $CODEINTERP_WORKER is set. */
int h_zygote_default(void);

/* The names of the CI_SANDBOX_* bits in @layers ("mount namespace"),
 * ", " between them; malloc'ed. */
char *h_layer_list(unsigned layers);

/*
 * Skips the current test, printing why and recording it for the list at
 * the end of make check: one line "program: test: reason" appended to
 * the file $CI_TEST_SKIPS names, when set. The part variant records a
 * skipped part of a test, which goes on. @test is the caller's __func__.
 */
void h_skip_because_(const char *test, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void h_skip_part_because_(const char *test, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define h_skip_because(...) h_skip_because_(__func__, __VA_ARGS__)
#define h_skip_part_because(...) h_skip_part_because_(__func__, __VA_ARGS__)

/* The CI_SANDBOX_* bits of @mask that @s (a session of a default config)
 * has; fails the test if it lacks one the probe says this kernel gives. */
unsigned h_layers_of(ci_session *s, unsigned mask);

/*
 * For a check that any one of the layers in @mask makes (one CI_SANDBOX_*
 * bit, or several that each suffice): when @s has none of them, and the
 * probe agrees this machine refuses each (h_layers_of), skips the test
 * (h_require_layer) or records the part named @what as skipped and
 * returns 0 (h_has_layer), saying which layer it needs. 1 when @s has one.
 */
void h_require_layer_(const char *test, ci_session *s, unsigned mask);
int h_has_layer_(const char *test, ci_session *s, unsigned mask, const char *what);
#define h_require_layer(s, layer) h_require_layer_(__func__, (s), (layer))

/* For a test of rollback (ci_config_set_rollback) in @s: where @s has no
 * PID namespace, which rollback needs, checks that it says it has no
 * rollback and skips the test as h_require_layer() does; else checks
 * that rollback is active. */
void h_require_rollback_(const char *test, ci_session *s);
#define h_require_rollback(s) h_require_rollback_(__func__, (s))
#define h_has_layer(s, layer, what) h_has_layer_(__func__, (s), (layer), (what))

/* 1 if @s's worker has a /proc of its own PID namespace (with its PID
 * and mount namespaces, where the kernel lets it mount one; else it
 * has the host's). */
int h_own_proc(ci_session *s);

/* 1 if the worker's uid (65534 for a root host, else ours), without a
 * capability, may open @path with @flags by the modes alone, tried in a
 * forked child: then only Landlock or the mount namespace keep a cell
 * from it. Opening for writing writes nothing. */
int h_open_by_the_workers_uid(const char *path, int flags);

/* 1 if @path is on a read-only mount here (a container's read-only root). */
int h_read_only(const char *path);

#endif /* CI_TEST_HELPERS_H */

/* ------------------------------------------------ rich outputs, files */

/* Prints a result's rich outputs, changed files and resources, to stderr,
 * for a failing test (h_dump() prints the rest). */
void h_dump_rich(const ci_result *r);

/* The number of outputs of @r whose MIME type is @mime. */
size_t h_count_mime(const ci_result *r, const char *mime);

/* The index of the @nth (from 0) output of @r whose MIME type is @mime;
 * fails the test, printing the outputs, if there is none. */
size_t h_find_mime(const ci_result *r, const char *mime, size_t nth);

/* Asserts that output @i of @r is @mime, of @type, in message @message,
 * with exactly the bytes of the NUL-terminated @data (NULL: not checked),
 * and that its buffer has a NUL after its last byte. */
void h_assert_output(const ci_result *r, size_t i, const char *mime, const char *data,
                     ci_output_type type, size_t message);

/* Asserts that output @i of @r is a PNG image (signature, IHDR) and
 * stores its width and height. */
void h_png_size(const ci_result *r, size_t i, uint32_t *width, uint32_t *height);
