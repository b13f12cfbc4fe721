/*
 * Soak: many sessions, driven by a few threads for a long time, with a
 * mix of ordinary cells and every kind of failure a host meets: timeouts,
 * memory errors, output over the limit, figures, file writes, workers
 * that exit or are killed (then restarted) and interrupts. Not part of
 * make check (its name is not test_*.c); run it with
 *
 *     make soak                           # 300 s, 50 sessions
 *     make soak SOAK_SECONDS=60 SOAK_SESSIONS=10
 *
 * Environment: SOAK_SECONDS (300), SOAK_SESSIONS (50), SOAK_THREADS (4),
 * SOAK_SEED (random; printed, replays the same choices though not the
 * same timings).
 *
 * Every ci_run() must give exactly one result with the status its kind of
 * cell expects (counted per session: cells issued, results received), and
 * return within its deadline. The host's resources are measured before
 * the sessions exist, once they are up and warm, at the end, and after
 * they are freed; the program exits 1 (after printing the report) if:
 *  - a result was lost or had an unexpected status or content, or a
 *    restart failed;
 *  - after every session is freed, any child process is left, or the
 *    descriptor count differs from before the sessions were made;
 *  - a zombie child exists at the end (a killed worker nobody reaped);
 *  - the descriptors or children at the end differ from the warm state;
 *  - host RSS grew by more than RSS_NOISE_MIB between warm and end, or
 *    the heap bytes in use (mallinfo2) by more than HEAP_NOISE_KIB.
 *
 * The thresholds. Between two cells the host holds, per session, its
 * config, its workspace scan (a handful of files here) and an error
 * message, all allocated at start; a run's result (at most 64 KiB of
 * each stream, a small PNG, a few strings) is freed by the driver before
 * the next. So in steady state the heap in use does not grow at all: any
 * growth is a leak, and HEAP_NOISE_KIB (256 KiB) only leaves room for
 * glibc's bookkeeping; a leak of 100 bytes a cell over the thousands of
 * cells of a run would exceed it. RSS is coarser: glibc keeps freed
 * memory in each thread's arena and returns only the top of it, so the
 * pages touched by the largest transient buffers (output buffers grown by
 * realloc to 64 KiB, file contents read back, 1 MiB drain chunks on the
 * stack) stay resident and fragmentation can move them; with SOAK_THREADS
 * arenas plus the main one this is a few MiB each, hence RSS_NOISE_MIB =
 * 20, which a leak of a result per cell (tens of KiB a cell) would pass
 * within a minute.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codeinterp.h"

#define RSS_NOISE_MIB 20
#define HEAP_NOISE_KIB 256

#define TIMEOUT_MS 10000  /* the sessions' timeout */
#define GRACE_MS 1000
#define SHORT_TIMEOUT_MS 300 /* the timeout of the "timeout" cells (ci_run_ex) */
#define MARGIN_MS 3000 /* past timeout + grace: a hang (2 loaded cores) */
#define OUTPUT_LIMIT (64 * 1024)
#define MEMORY_LIMIT (512ull << 20)

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static uint64_t rnd(uint64_t *st)
{
    *st ^= *st >> 12;
    *st ^= *st << 25;
    *st ^= *st >> 27;
    return *st * 2685821657736338717ULL;
}

static int rnd_in(uint64_t *st, int lo, int hi)
{
    return lo + (int)(rnd(st) % (uint64_t)(hi - lo + 1));
}

/* ------------------------------------------------------------ problems */

static atomic_long problems;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
    va_list ap;
    long n = atomic_fetch_add(&problems, 1);
    if (n >= 100)
        return; /* counted, not printed */
    pthread_mutex_lock(&print_lock);
    fprintf(stderr, "soak: PROBLEM: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    pthread_mutex_unlock(&print_lock);
}

/* ---------------------------------------------------------------- cells */

/* The multi-line cells, read once from test/cells (CI_TEST_CELLS); each
 * is run after a line that sets its parameter. */
static struct {
    char *pandas, *figure;
} cells;

/* The cell test/cells/@name.py, or NULL with the reason on stderr. */
static char *read_cell(const char *name)
{
    char path[4096], *text;
    long len;
    FILE *f;

    snprintf(path, sizeof path, "%s/%s.py", CI_TEST_CELLS, name);
    if (!(f = fopen(path, "re"))) {
        fprintf(stderr, "soak: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || len > 1500 ||
        fseek(f, 0, SEEK_SET) != 0 || !(text = calloc(1, (size_t)len + 1)) ||
        fread(text, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "soak: %s: cannot be read whole (at most 1500 bytes)\n", path);
        fclose(f);
        return NULL;
    }
    fclose(f);
    return text;
}

static const char *orn(const char *s)
{
    return s ? s : "(null)";
}

static const char *status_name(ci_status st)
{
    static const char *const names[] = {"OK", "ERROR", "TIMEOUT", "MEMORY", "KILLED", "INTERRUPTED"};
    return (unsigned)st < 6 ? names[st] : "?";
}

/* ------------------------------------------------------------ the cells */

enum kind {
    K_PANDAS,    /* a small DataFrame, groupby, print: OK, exact value and stdout */
    K_PRINT,     /* print lines: OK, exact stdout */
    K_TIMEOUT,   /* sleep past a 300 ms per-run timeout: TIMEOUT */
    K_MEMORY,    /* allocate past the 512 MiB limit: MEMORY */
    K_BIGOUT,    /* print past the output limit: OK, stdout cut at the limit */
    K_FIGURE,    /* a matplotlib figure: OK, one image/png output */
    K_FILE,      /* write a file: OK, listed, content read back by the host */
    K_EXIT,      /* os._exit(3): KILLED WorkerDied, then restart */
    K_KILL_RUN,  /* SIGKILL from the host during a run: KILLED, restart */
    K_KILL_IDLE, /* SIGKILL between runs, then a run: KILLED, restart */
    K_INTERRUPT, /* ci_session_interrupt during a run: INTERRUPTED */
    K_COUNT
};

static const struct {
    const char *name;
    int weight;
} kinds[K_COUNT] = {
    [K_PANDAS] = {"pandas", 30},    [K_PRINT] = {"print", 15},
    [K_TIMEOUT] = {"timeout", 7},   [K_MEMORY] = {"memory", 7},
    [K_BIGOUT] = {"big output", 7}, [K_FIGURE] = {"figure", 10},
    [K_FILE] = {"file", 10},        [K_EXIT] = {"os._exit", 3},
    [K_KILL_RUN] = {"SIGKILL run", 3}, [K_KILL_IDLE] = {"SIGKILL idle", 2},
    [K_INTERRUPT] = {"interrupt", 3},
};

struct tally {
    atomic_long issued, expected, unexpected, total_ms, max_ms;
};
static struct tally tallies[K_COUNT];

struct sess {
    ci_session *s;
    long issued;   /* ci_run calls */
    long results;  /* ci_run calls that returned CI_OK with a result */
    long refused;  /* CI_EDEAD after an idle kill (allowed, see K_KILL_IDLE) */
    long restarts, restart_failures;
    int count;     /* the execution count the next result must have */
    int files;     /* names written, for K_FILE */
};

static struct sess *sessions;
static int nsessions, nthreads;
static int64_t end_at;
static uint64_t seed;
static atomic_long total_restarts;

/* ---- a helper thread: kill or interrupt after a delay ---- */

struct poke {
    pthread_t thread;
    ci_session *s; /* for an interrupt */
    pid_t pid;     /* for a kill */
    int delay_ms;
    int done;      /* 1 when the interrupt or kill was delivered */
};

static void *poke_main(void *arg)
{
    struct poke *p = arg;
    sleep_ms(p->delay_ms);
    if (p->pid > 0) {
        p->done = kill(p->pid, SIGKILL) == 0;
        return NULL;
    }
    /* The cell sleeps 10 s: keep asking until it is seen running. */
    for (int i = 0; i < 2000 && !p->done; i++) {
        p->done = ci_session_interrupt(p->s) == 1;
        if (!p->done)
            sleep_ms(5);
    }
    return NULL;
}

static int poke_start(struct poke *p)
{
    return pthread_create(&p->thread, NULL, poke_main, p);
}

/* ---- checks ---- */

static int has_killed_by(const ci_result *r, const char *how)
{
    const char *n = ci_result_error_name(r), *v = ci_result_error_value(r);
    return ci_result_status(r) == CI_STATUS_KILLED && n && !strcmp(n, "WorkerDied") && v &&
           strstr(v, how);
}

static void describe(const ci_result *r, char *buf, size_t len)
{
    size_t olen = 0;
    const char *o = ci_result_stdout(r, &olen);
    snprintf(buf, len, "status %s, count %d, error %s: %.200s, value %.100s, stdout %zu bytes: %.100s, stderr: %.300s",
             status_name(ci_result_status(r)), ci_result_execution_count(r),
             orn(ci_result_error_name(r)), orn(ci_result_error_value(r)), orn(ci_result_value(r)),
             olen, orn(o), orn(ci_result_stderr(r, NULL)));
}

static int count_png(const ci_result *r)
{
    int k = 0;
    for (size_t i = 0; i < ci_result_output_count(r); i++) {
        size_t len = 0;
        const unsigned char *d = ci_result_output_data(r, i, &len);
        const char *m = ci_result_output_mime(r, i);
        if (m && !strcmp(m, "image/png") && d && len > 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8))
            k++;
    }
    return k;
}

static void restart(struct sess *ss, int id)
{
    int rc = ci_session_restart(ss->s);
    ss->restarts++;
    atomic_fetch_add(&total_restarts, 1);
    ss->count = 1;
    if (rc != CI_OK) {
        ss->restart_failures++;
        problem("session %d: ci_session_restart: %d (%s): %s", id, rc, ci_strerror(rc),
                ci_session_errmsg(ss->s));
        /* Try again once, so the soak goes on. */
        if (ci_session_restart(ss->s) != CI_OK)
            problem("session %d: second restart failed too: %s", id, ci_session_errmsg(ss->s));
    }
}

/* Runs one cell of @kind on session @id and checks its result; restarts
 * the session when its worker died. */
static void one_cell(int id, enum kind kind, uint64_t *rng)
{
    struct sess *ss = &sessions[id];
    ci_session *s = ss->s;
    char code[2048], want[256], detail[1024];
    ci_run_options opts = CI_RUN_OPTIONS_INIT;
    struct poke poke = {0};
    int poked = 0, ok = 0, died = 0, n = 0;
    ci_result *r = NULL;
    unsigned long deadline = TIMEOUT_MS + GRACE_MS + MARGIN_MS;
    want[0] = '\0';

    switch (kind) {
    case K_PANDAS:
        n = rnd_in(rng, 100, 5000);
        snprintf(code, sizeof code, "soak_rows = %d\n%s", n, cells.pandas);
        snprintf(want, sizeof want, "%lld", (long long)n * (n - 1) / 2);
        break;
    case K_PRINT:
        n = rnd_in(rng, 1, 200);
        snprintf(code, sizeof code, "for i in range(%d):\n    print('line', i)", n);
        break;
    case K_TIMEOUT:
        snprintf(code, sizeof code, "import time\ntime.sleep(10)");
        opts.timeout_ms = SHORT_TIMEOUT_MS;
        deadline = SHORT_TIMEOUT_MS + GRACE_MS + MARGIN_MS;
        break;
    case K_MEMORY:
        n = rnd_in(rng, 600, 1500);
        snprintf(code, sizeof code, "x = bytearray(%d * 2**20)", n);
        break;
    case K_BIGOUT:
        n = rnd_in(rng, OUTPUT_LIMIT + 1, 4 * OUTPUT_LIMIT);
        snprintf(code, sizeof code, "import sys\nsys.stdout.write('y' * %d)\nNone", n);
        break;
    case K_FIGURE:
        snprintf(code, sizeof code, "soak_y = %d\n%s", rnd_in(rng, 0, 9), cells.figure);
        break;
    case K_FILE:
        n = ss->files++ % 5;
        snprintf(want, sizeof want, "token-%d-%" PRIu64, id, rnd(rng) % 1000000007);
        snprintf(code, sizeof code, "open('f%d.txt', 'w').write('%s')", n, want);
        break;
    case K_EXIT:
        snprintf(code, sizeof code, "import os\nos.write(1, b'bye')\nos._exit(3)");
        break;
    case K_KILL_RUN:
        snprintf(code, sizeof code, "import time\ntime.sleep(10)");
        poke.pid = ci_session_pid(s);
        poke.delay_ms = rnd_in(rng, 20, 300);
        break;
    case K_KILL_IDLE: {
        pid_t pid = ci_session_pid(s);
        if (pid <= 0 || kill(pid, SIGKILL) != 0) {
            problem("session %d: cannot kill worker %d: %s", id, (int)pid, strerror(errno));
            return;
        }
        /* Until it is a zombie: dead, not yet reaped by the library. */
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        for (int i = 0; i < 200; i++) {
            FILE *f = fopen(path, "re");
            size_t k = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
            if (f)
                fclose(f);
            buf[k] = '\0';
            char *p = strrchr(buf, ')');
            if (!p || p[1] == '\0' || p[2] == 'Z')
                break;
            sleep_ms(10);
        }
        snprintf(code, sizeof code, "'never runs'");
        break;
    }
    case K_INTERRUPT:
        snprintf(code, sizeof code, "import time\ntime.sleep(10)");
        poke.s = s;
        poke.delay_ms = rnd_in(rng, 20, 200);
        break;
    case K_COUNT:
        return;
    }

    if (poke.pid > 0 || poke.s) {
        if (poke_start(&poke) != 0) {
            problem("session %d: pthread_create failed", id);
            return;
        }
        poked = 1;
    }
    atomic_fetch_add(&tallies[kind].issued, 1);
    ss->issued++;
    int64_t t0 = now_ms();
    int rc = ci_run_ex(s, code, &opts, &r);
    int64_t took = now_ms() - t0;
    if (poked)
        pthread_join(poke.thread, NULL);
    atomic_fetch_add(&tallies[kind].total_ms, took);
    long prev = atomic_load(&tallies[kind].max_ms);
    while (took > prev && !atomic_compare_exchange_weak(&tallies[kind].max_ms, &prev, took))
        ;

    if (rc == CI_EDEAD && kind == K_KILL_IDLE) {
        /* Allowed by the API: the library may see the death first. */
        ss->refused++;
        atomic_fetch_add(&tallies[kind].expected, 1);
        restart(ss, id);
        return;
    }
    if (rc != CI_OK || !r) {
        problem("session %d, %s: ci_run returned %d (%s): %s", id, kinds[kind].name, rc,
                ci_strerror(rc), ci_session_errmsg(s));
        atomic_fetch_add(&tallies[kind].unexpected, 1);
        if (ci_session_pid(s) <= 0)
            restart(ss, id);
        return;
    }
    ss->results++;
    if ((unsigned long)took > deadline)
        problem("session %d, %s: ci_run took %lld ms, past its deadline of %lu ms", id,
                kinds[kind].name, (long long)took, deadline);

    ci_status st = ci_result_status(r);
    size_t olen = 0;
    const char *out = ci_result_stdout(r, &olen);
    const char *value = ci_result_value(r);
    const char *ename = ci_result_error_name(r);
    switch (kind) {
    case K_PANDAS: {
        char line[64];
        snprintf(line, sizeof line, "rows %d\n", n);
        ok = st == CI_STATUS_OK && value && !strcmp(value, want) && !strcmp(out, line);
        break;
    }
    case K_PRINT: {
        size_t len = 0;
        char line[32];
        for (int i = 0; i < n; i++)
            len += (size_t)snprintf(line, sizeof line, "line %d\n", i);
        snprintf(line, sizeof line, "line %d\n", n - 1);
        ok = st == CI_STATUS_OK && olen == len && !strncmp(out, "line 0\n", 7) &&
             !strcmp(out + len - strlen(line), line);
        break;
    }
    case K_TIMEOUT:
        ok = st == CI_STATUS_TIMEOUT && ename && !strcmp(ename, "TimeoutError") &&
             took >= SHORT_TIMEOUT_MS;
        break;
    case K_MEMORY:
        ok = st == CI_STATUS_MEMORY && ename && !strcmp(ename, "MemoryError");
        break;
    case K_BIGOUT: {
        /* Head and tail of the output limit, the marker line between. */
        size_t at = 0, mlen = 0;
        ci_uint64 left = 0;
        ok = st == CI_STATUS_OK && (ci_result_truncated(r) & CI_TRUNCATED_STDOUT) &&
             ci_result_cut(r, CI_STREAM_STDOUT, &at, &mlen, &left, NULL) == 1 &&
             olen == OUTPUT_LIMIT + mlen && left == (ci_uint64)(n - OUTPUT_LIMIT) &&
             out[0] == 'y' && out[olen - 1] == 'y';
        break;
    }
    case K_FIGURE:
        ok = st == CI_STATUS_OK && count_png(r) == 1;
        break;
    case K_FILE: {
        char name[32];
        snprintf(name, sizeof name, "f%d.txt", n);
        snprintf(detail, sizeof detail, "%zu", strlen(want));
        ok = st == CI_STATUS_OK && value && !strcmp(value, detail) &&
             ci_result_file_count(r) == 1 && ci_result_file_name(r, 0) &&
             !strcmp(ci_result_file_name(r, 0), name);
        if (ok) {
            void *data = NULL;
            size_t len = 0;
            int grc = ci_session_get_file(s, name, &data, &len);
            ok = grc == CI_OK && len == strlen(want) && !memcmp(data, want, len);
            if (!ok)
                problem("session %d: get_file %s: %d, %zu bytes", id, name, grc, len);
            ci_free(data);
        }
        break;
    }
    case K_EXIT:
        ok = has_killed_by(r, "exited with status 3") && olen == 3 && !memcmp(out, "bye", 3);
        died = 1;
        break;
    case K_KILL_RUN:
        ok = poke.done && (has_killed_by(r, "SIGKILL") || has_killed_by(r, "signal 9"));
        died = 1;
        break;
    case K_KILL_IDLE:
        ok = has_killed_by(r, "SIGKILL") || has_killed_by(r, "signal 9");
        died = 1;
        break;
    case K_INTERRUPT:
        ok = poke.done && st == CI_STATUS_INTERRUPTED && ename &&
             !strcmp(ename, "KeyboardInterrupt");
        break;
    case K_COUNT:
        break;
    }
    if (ci_result_execution_count(r) != ss->count) {
        problem("session %d, %s: execution count %d, expected %d", id, kinds[kind].name,
                ci_result_execution_count(r), ss->count);
        ok = 0;
    }
    ss->count++;
    if (ok) {
        atomic_fetch_add(&tallies[kind].expected, 1);
    } else {
        atomic_fetch_add(&tallies[kind].unexpected, 1);
        describe(r, detail, sizeof detail);
        problem("session %d, %s (%lld ms): %s", id, kinds[kind].name, (long long)took, detail);
    }
    ci_result_free(r);
    /* A dead worker (expected or not) is restarted. */
    if (died || ci_session_pid(s) <= 0) {
        if (ci_session_pid(s) > 0)
            problem("session %d, %s: the worker is still alive after a KILLED result", id,
                    kinds[kind].name);
        restart(ss, id);
    }
}

static enum kind pick_kind(uint64_t *rng)
{
    int total = 0;
    for (int k = 0; k < K_COUNT; k++)
        total += kinds[k].weight;
    int x = rnd_in(rng, 0, total - 1);
    for (int k = 0; k < K_COUNT; k++) {
        if (x < kinds[k].weight)
            return (enum kind)k;
        x -= kinds[k].weight;
    }
    return K_PANDAS;
}

/* ---- the driving threads ---- */

struct driver {
    pthread_t thread;
    int index;
    int phase; /* 0: create and warm its sessions; 1: soak; 2: one last cell each */
    int failed;
};

static ci_config *config;

static void *driver_main(void *arg)
{
    struct driver *d = arg;
    uint64_t rng = seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(d->index + 1));
    if (!rng)
        rng = 1;
    if (d->phase == 0) {
        for (int id = d->index; id < nsessions; id += nthreads) {
            struct sess *ss = &sessions[id];
            int rc = ci_session_new(&ss->s, config);
            if (rc != CI_OK) {
                fprintf(stderr, "soak: ci_session_new: %d (%s): %s\n", rc, ci_strerror(rc),
                        ci_session_errmsg(NULL));
                d->failed = 1;
                return NULL;
            }
            ss->count = 1;
            /* Warm: the paths of the heavier cells, once each. */
            one_cell(id, K_PANDAS, &rng);
            one_cell(id, K_FIGURE, &rng);
            one_cell(id, K_BIGOUT, &rng);
            one_cell(id, K_FILE, &rng);
        }
        return NULL;
    }
    if (d->phase == 2) {
        /* A worker opens some /proc descriptors at its first run; one
         * cell on each brings every session to the state the warm-up
         * left it in (restarted ones included), for the comparison. */
        for (int id = d->index; id < nsessions; id += nthreads)
            one_cell(id, K_PRINT, &rng);
        return NULL;
    }
    int mine = 0;
    for (int id = d->index; id < nsessions; id += nthreads)
        mine++;
    while (now_ms() < end_at && mine > 0) {
        int pick = rnd_in(&rng, 0, mine - 1);
        int id = d->index + pick * nthreads;
        one_cell(id, pick_kind(&rng), &rng);
    }
    return NULL;
}

static int run_drivers(int phase)
{
    struct driver *d = calloc((size_t)nthreads, sizeof *d);
    int failed = 0;
    for (int i = 0; i < nthreads; i++) {
        d[i].index = i;
        d[i].phase = phase;
        if (pthread_create(&d[i].thread, NULL, driver_main, &d[i]) != 0) {
            fprintf(stderr, "soak: pthread_create failed\n");
            exit(2);
        }
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join(d[i].thread, NULL);
        failed |= d[i].failed;
    }
    free(d);
    return failed;
}

/* ------------------------------------------------------------ resources */

struct snapshot {
    long rss_kib;
    long heap_kib; /* malloc'ed bytes in use, all arenas (mallinfo2) */
    int fds, threads, children, zombies;
};

static long status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    long v = -1;
    size_t klen = strlen(key);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && line[klen] == ':') {
            v = strtol(line + klen + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static int count_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void children(int *n, int *zombies)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    *n = *zombies = 0;
    if (!d)
        return;
    while ((e = readdir(d))) {
        char path[64], buf[512];
        int pid = atoi(e->d_name), ppid;
        char st;
        if (pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = '\0';
        char *p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %c %d", &st, &ppid) != 2 || ppid != getpid())
            continue;
        (*n)++;
        if (st == 'Z')
            (*zombies)++;
    }
    closedir(d);
}

static struct snapshot measure(void)
{
    struct snapshot m;
    struct mallinfo2 mi = mallinfo2();
    m.rss_kib = status_kib("VmRSS");
    m.heap_kib = (long)((mi.uordblks + mi.hblkhd) / 1024);
    /* opendir's own descriptor is open while it counts. */
    m.fds = count_dir("/proc/self/fd") - 1;
    m.threads = count_dir("/proc/self/task");
    children(&m.children, &m.zombies);
    return m;
}

/* Zombies can exist for a moment (a worker killed just now, reaped by a
 * background thread of the library when it is slow to exit), and so can
 * that thread: waits up to 2 s for the zombies to go and, when
 * @max_children is not negative, for the children to be at most that many
 * and the threads at most @max_threads, before measuring. */
static struct snapshot measure_settled(int max_children, int max_threads)
{
    struct snapshot m = measure();
    for (int i = 0; i < 100; i++) {
        if (m.zombies == 0 &&
            (max_children < 0 || (m.children <= max_children && m.threads <= max_threads)))
            break;
        sleep_ms(20);
        m = measure();
    }
    return m;
}

static long env_long(const char *name, long dflt)
{
    const char *e = getenv(name);
    return e && *e ? strtol(e, NULL, 0) : dflt;
}

int main(void)
{
    long seconds = env_long("SOAK_SECONDS", 300);
    nsessions = (int)env_long("SOAK_SESSIONS", 50);
    nthreads = (int)env_long("SOAK_THREADS", 4);
    const char *e = getenv("SOAK_SEED");
    seed = e && *e ? strtoull(e, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    if (!seed)
        seed = 1;
    if (seconds < 1 || nsessions < 1 || nthreads < 1) {
        fprintf(stderr, "soak: SOAK_SECONDS, SOAK_SESSIONS and SOAK_THREADS must be positive\n");
        return 2;
    }
    if (nthreads > nsessions)
        nthreads = nsessions;
    printf("soak: %ld s, %d sessions, %d threads, seed %" PRIu64 " (SOAK_SEED replays it)\n",
           seconds, nsessions, nthreads, seed);
    fflush(stdout);

    if (!(cells.pandas = read_cell("soak_pandas")) || !(cells.figure = read_cell("soak_figure")))
        return 2;
    sessions = calloc((size_t)nsessions, sizeof *sessions);
    config = ci_config_new();
    if (!sessions || !config || ci_config_set_timeout_ms(config, TIMEOUT_MS) != CI_OK ||
        ci_config_set_grace_ms(config, GRACE_MS) != CI_OK ||
        ci_config_set_memory_limit(config, MEMORY_LIMIT) != CI_OK ||
        ci_config_set_output_limit(config, OUTPUT_LIMIT) != CI_OK) {
        fprintf(stderr, "soak: config failed\n");
        return 2;
    }

    struct snapshot before = measure();
    int64_t t0 = now_ms();
    if (run_drivers(0)) {
        fprintf(stderr, "soak: could not start the sessions\n");
        return 1;
    }
    int64_t started_ms = now_ms() - t0;
    struct snapshot warm = measure_settled(-1, 0);
    printf("soak: %d sessions up and warm in %.1f s; soaking for %ld s\n", nsessions,
           started_ms / 1000.0, seconds);
    fflush(stdout);

    /* The warm-up's cells are not part of the tallies. */
    long warm_issued = 0, warm_results = 0;
    for (int k = 0; k < K_COUNT; k++) {
        warm_issued += tallies[k].issued;
        atomic_store(&tallies[k].issued, 0);
        atomic_store(&tallies[k].expected, 0);
        atomic_store(&tallies[k].unexpected, 0);
        atomic_store(&tallies[k].total_ms, 0);
        atomic_store(&tallies[k].max_ms, 0);
    }
    for (int i = 0; i < nsessions; i++) {
        warm_results += sessions[i].results;
        sessions[i].issued = sessions[i].results = sessions[i].refused = 0;
    }
    long warm_problems = atomic_load(&problems);

    t0 = now_ms();
    end_at = t0 + seconds * 1000;
    run_drivers(1);
    int64_t soak_ms = now_ms() - t0;
    run_drivers(2);
    struct snapshot end = measure_settled(-1, 0);

    /* Every ci_run gave exactly one result (or, after an idle kill, the
     * allowed CI_EDEAD). */
    long issued = 0, results = 0, refused = 0, restarts = 0, restart_failures = 0, lost = 0;
    for (int i = 0; i < nsessions; i++) {
        struct sess *ss = &sessions[i];
        issued += ss->issued;
        results += ss->results;
        refused += ss->refused;
        restarts += ss->restarts;
        restart_failures += ss->restart_failures;
        if (ss->issued != ss->results + ss->refused) {
            lost += ss->issued - ss->results - ss->refused;
            problem("session %d: %ld cells issued, %ld results, %ld refused", i, ss->issued,
                    ss->results, ss->refused);
        }
    }

    for (int i = 0; i < nsessions; i++)
        ci_session_free(sessions[i].s);
    ci_config_free(config);
    /* No child; the main thread and the library's spawner thread. */
    struct snapshot freed = measure_settled(0, before.threads + 1);

    /* ---- the report ---- */
    printf("\n%-14s %8s %9s %11s %8s %8s\n", "cell kind", "issued", "expected", "unexpected",
           "mean ms", "max ms");
    long t_exp = 0, t_unexp = 0;
    for (int k = 0; k < K_COUNT; k++) {
        long n = tallies[k].issued;
        printf("%-14s %8ld %9ld %11ld %8.1f %8ld\n", kinds[k].name, n, (long)tallies[k].expected,
               (long)tallies[k].unexpected, n ? (double)tallies[k].total_ms / (double)n : 0.0,
               (long)tallies[k].max_ms);
        t_exp += tallies[k].expected;
        t_unexp += tallies[k].unexpected;
    }
    printf("%-14s %8ld %9ld %11ld\n", "total", issued, t_exp, t_unexp);
    printf("\ncells: %ld issued in %.1f s (%.1f a second), %ld results, %ld refused with "
           "CI_EDEAD, %ld lost\n",
           issued, soak_ms / 1000.0, issued * 1000.0 / (double)(soak_ms ? soak_ms : 1), results,
           refused, lost);
    printf("warm-up: %ld cells, %ld results, %ld problems\n", warm_issued, warm_results,
           warm_problems);
    printf("restarts: %ld (%ld failed)\n", restarts, restart_failures);

    printf("\n%-22s %10s %10s %10s %10s\n", "host", "before", "warm", "end", "freed");
    printf("%-22s %10.1f %10.1f %10.1f %10.1f\n", "RSS (MiB)", before.rss_kib / 1024.0,
           warm.rss_kib / 1024.0, end.rss_kib / 1024.0, freed.rss_kib / 1024.0);
    printf("%-22s %10ld %10ld %10ld %10ld\n", "heap in use (KiB)", before.heap_kib,
           warm.heap_kib, end.heap_kib, freed.heap_kib);
    printf("%-22s %10d %10d %10d %10d\n", "descriptors", before.fds, warm.fds, end.fds,
           freed.fds);
    printf("%-22s %10d %10d %10d %10d\n", "threads", before.threads, warm.threads, end.threads,
           freed.threads);
    printf("%-22s %10d %10d %10d %10d\n", "child processes", before.children, warm.children,
           end.children, freed.children);
    printf("%-22s %10d %10d %10d %10d\n", "zombies", before.zombies, warm.zombies, end.zombies,
           freed.zombies);

    /* ---- the verdict ---- */
    int fail = 0;
#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            printf("FAIL: " __VA_ARGS__);                                                   \
            putchar('\n');                                                                  \
            fail = 1;                                                                       \
        }                                                                                   \
    } while (0)
    printf("\n");
    CHECK(lost == 0, "%ld results lost", lost);
    CHECK(t_unexp == 0, "%ld results with an unexpected status or content", t_unexp);
    CHECK(restart_failures == 0, "%ld restarts failed", restart_failures);
    CHECK(atomic_load(&problems) == 0, "%ld problems (see stderr)", (long)atomic_load(&problems));
    CHECK(freed.children == 0, "%d child processes left after every session was freed",
          freed.children);
    CHECK(freed.fds == before.fds, "%d descriptors after every session was freed, %d before",
          freed.fds, before.fds);
    CHECK(end.zombies == 0 && freed.zombies == 0, "zombies: %d at the end, %d after freeing",
          end.zombies, freed.zombies);
    CHECK(end.children == warm.children, "%d children at the end, %d when warm", end.children,
          warm.children);
    CHECK(end.fds == warm.fds, "%d descriptors at the end, %d when warm", end.fds, warm.fds);
    CHECK(end.rss_kib - warm.rss_kib <= RSS_NOISE_MIB * 1024,
          "host RSS grew by %.1f MiB (noise threshold %d MiB)",
          (end.rss_kib - warm.rss_kib) / 1024.0, RSS_NOISE_MIB);
    CHECK(end.heap_kib - warm.heap_kib <= HEAP_NOISE_KIB,
          "heap in use grew by %ld KiB (noise threshold %d KiB)", end.heap_kib - warm.heap_kib,
          HEAP_NOISE_KIB);
    /* Only the library's spawner thread stays. */
    CHECK(freed.threads <= before.threads + 1, "%d threads after freeing, %d before",
          freed.threads, before.threads);
    printf("%s\n", fail ? "soak: FAILED" : "soak: passed");
    return fail;
}
