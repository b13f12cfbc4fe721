/*
 * make bench: the codeinterp side of the benchmark (bench/jupyter_bench.py
 * is the Jupyter and plain-python side, bench/report.py prints the table).
 *
 *     build/bench/bench bench/workload.py > codeinterp.tsv
 *
 * Writes one line per measurement on stdout,
 *     key <TAB> n <TAB> median <TAB> p90 <TAB> unit
 * and its progress on stderr. It measures and asserts nothing about time:
 * it exits 1 only when a call fails (a session that does not start, a
 * cell that does not run, a file that comes back different).
 *
 * Environment: BENCH_SESSIONS (1000) concurrent sessions, BENCH_THREADS (4)
 * threads starting them; BENCH_ONLY=concurrent measures only those,
 * BENCH_ONLY=snapshot only the snapshots (row 9), BENCH_ONLY=rollback only
 * rollback (row 10).
 *
 * Row 9: snapshot and restore of a session holding a 100 MB DataFrame
 * and a 1 MiB file: their times, and the snapshot's size against the
 * state's own pickle (pickle.dumps of the frame, protocol 5) plus the file;
 * then ci_session_fork of it, and the parent's trivial cell before and
 * after each fork.
 *
 * Row 10: rollback (ci_config_set_rollback) in a session holding that
 * DataFrame: a trivial cell's round trip with it on and off, in turns
 * (its cost is the checkpoint's fork and its kill), and a fatal cell
 * (os._exit) rolled back, against restarting a session without it and
 * making the frame again, which is what an agent does without rollback.
 *
 * Last, the cost of a signed package manifest of the analyst's set (the
 * distributions $BENCH_MANIFEST_PACKAGES names, comma-separated, which
 * make bench takes from tools/analysis_packages.txt; numpy, pandas and
 * matplotlib without it, with what they pull in and the standard
 * library), made and signed with build/codeinterp-manifest in a directory
 * of its own: the host's verification of the signature, the zygote's hashing of
 * the listed files, and session ready with and without the manifest,
 * taken in turns so that the machine's drift falls on both alike.
 *
 * Then the first import of each module of the analyst's package set
 * (tools/analysis_packages.txt, or $BENCH_PACKAGE_LIST) in a new session:
 * the cell's round trip and the unique memory it adds, N_IMPORT sessions
 * a module, taken in turns; and the whole set imported in one cell.
 *
 * Session ready (row 1) is measured with PACE_MS between sessions, as an
 * agent opens them, and again back to back, where the two CPUs also
 * serve the last session's exit and the next spare.
 *
 * Sessions are forked from the zygote (the default): the process's first
 * session pays the zygote's warm-up, which is measured on its own; the
 * same start with the zygote turned off (fork + exec of a worker that
 * imports everything itself) is measured too, for comparison.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codeinterp.h"
#include "zygote.h"       /* ci_zygote_stop_all */
#include "manifest.h"     /* the worker's file check, timed in-process */
#include "manifest_doc.h" /* the host's verification, timed in-process */

#define N_READY 50
#define N_EXEC 5
#define N_TRIVIAL 2000
#define N_WARMUP 20
#define N_WORKLOAD 10
#define N_FILE 5
#define FILE_BYTES (100u * 1024u * 1024u)
#define N_VERIFY 10
#define N_HASH 3
#define N_PAIRS 30
#define N_IMPORT 5
#define MAX_MODULES 64
#define N_SNAPSHOT 5
#define N_ROLLBACK 30
/* Between the sessions of row 1: an agent's next session finds the
 * library idle, the zygote's spare made (it waits 10 ms after handing
 * one out, then forks and prepares the next in a few ms). */
#define PACE_MS 50

static const char *FIRST_CELL = "import pandas as pd; pd.DataFrame({'a':[1]}).a.sum()";

static int failures;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and nearest-rank p90 of v[0..n-1] (sorts v). */
static void emit(const char *key, double *v, int n, const char *unit)
{
    if (n <= 0) {
        printf("%s\t0\tnan\tnan\t%s\n", key, unit);
        return;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    int i90 = (int)((9 * n + 9) / 10) - 1; /* ceil(0.9 n) - 1 */
    printf("%s\t%d\t%.3f\t%.3f\t%s\n", key, n, med, v[i90], unit);
    fflush(stdout);
}

static void emit1(const char *key, double value, const char *unit)
{
    emit(key, &value, 1, unit);
}

/* Private_Clean + Private_Dirty and Rss of @pid, in KiB; -1 if unreadable. */
static int smaps(int pid, double *priv_kib, double *rss_kib)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    double priv = 0, rss = 0, kb;
    int seen = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "Private_Clean: %lf kB", &kb) == 1 ||
            sscanf(line, "Private_Dirty: %lf kB", &kb) == 1) {
            priv += kb;
            seen++;
        } else if (sscanf(line, "Rss: %lf kB", &kb) == 1) {
            rss = kb;
        }
    }
    fclose(f);
    if (seen != 2)
        return -1;
    *priv_kib = priv;
    if (rss_kib)
        *rss_kib = rss;
    return 0;
}

/* Runs @code; returns the result if it ran to CI_STATUS_OK, else NULL. */
static ci_result *run_ok(ci_session *s, const char *code)
{
    ci_result *r = NULL;
    int rc = ci_run(s, code, &r);
    if (rc != CI_OK) {
        fprintf(stderr, "bench: ci_run: %s: %s\n", ci_strerror(rc), ci_session_errmsg(s));
        failures++;
        return NULL;
    }
    if (ci_result_status(r) != CI_STATUS_OK) {
        fprintf(stderr, "bench: cell failed (status %d): %s: %s\n", (int)ci_result_status(r),
                ci_result_error_name(r) ? ci_result_error_name(r) : "",
                ci_result_error_value(r) ? ci_result_error_value(r) : "");
        failures++;
        ci_result_free(r);
        return NULL;
    }
    return r;
}

/* ci_session_new with @cfg (NULL: defaults), timed: its milliseconds in
 * @ms. The session, or NULL after saying why. */
static ci_session *start(const ci_config *cfg, double *ms)
{
    ci_session *s;
    double t0 = now_us();
    int rc = ci_session_new(&s, cfg);
    *ms = (now_us() - t0) / 1e3;
    if (rc != CI_OK) {
        fprintf(stderr, "bench: ci_session_new: %s: %s\n", ci_strerror(rc),
                ci_session_errmsg(NULL));
        return NULL;
    }
    return s;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, 4096, f);
        len += got;
    } while (got > 0);
    fclose(f);
    buf[len] = '\0';
    return buf;
}

/* ------------------------------------------------ concurrent sessions */

struct pool {
    ci_session **s;
    double *start_ms;
    int n;
    atomic_int next;
    atomic_int started, answered;
};

static void *start_main(void *arg)
{
    struct pool *p = arg;
    for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
        double t0 = now_us();
        int rc = ci_session_new(&p->s[i], NULL);
        p->start_ms[i] = (now_us() - t0) / 1e3;
        if (rc == CI_OK)
            atomic_fetch_add(&p->started, 1);
        else
            fprintf(stderr, "bench: session %d: %s: %s\n", i, ci_strerror(rc),
                    ci_session_errmsg(NULL));
    }
    return NULL;
}

static void *answer_main(void *arg)
{
    struct pool *p = arg;
    for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
        if (!p->s[i])
            continue;
        ci_result *r = NULL;
        if (ci_run(p->s[i], "sum(range(100))", &r) == CI_OK &&
            ci_result_status(r) == CI_STATUS_OK && ci_result_value(r) &&
            strcmp(ci_result_value(r), "4950") == 0)
            atomic_fetch_add(&p->answered, 1);
        ci_result_free(r);
    }
    return NULL;
}

static void *free_main(void *arg)
{
    struct pool *p = arg;
    for (int i; (i = atomic_fetch_add(&p->next, 1)) < p->n;)
        ci_session_free(p->s[i]);
    return NULL;
}

static void in_threads(struct pool *p, int threads, void *(*fn)(void *))
{
    pthread_t t[64];
    int made = 0;
    atomic_store(&p->next, 0);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[made], NULL, fn, p) == 0)
            made++;
    if (made == 0)
        fn(p);
    for (int i = 0; i < made; i++)
        pthread_join(t[i], NULL);
}

/* The descriptors this process has open. */
static int open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = -1; /* the DIR's own */

    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void concurrent(int n, int threads)
{
    struct pool p = {0};
    int fds_before = open_descriptors(), fds_after;
    struct rlimit nofile = {0};
    p.n = n;
    p.s = calloc((size_t)n, sizeof *p.s);
    p.start_ms = calloc((size_t)n, sizeof *p.start_ms);
    if (!p.s || !p.start_ms) {
        failures++;
        return;
    }
    fprintf(stderr, "bench: starting %d sessions from %d threads\n", n, threads);
    double t0 = now_us();
    in_threads(&p, threads, start_main);
    double all_ms = (now_us() - t0) / 1e3;
    fds_after = open_descriptors();
    getrlimit(RLIMIT_NOFILE, &nofile);

    double total_priv = 0;
    int measured = 0;
    for (int i = 0; i < n; i++) {
        double priv;
        if (p.s[i] && smaps(ci_session_pid(p.s[i]), &priv, NULL) == 0) {
            total_priv += priv;
            measured++;
        }
    }
    t0 = now_us();
    in_threads(&p, threads, answer_main);
    double answer_ms = (now_us() - t0) / 1e3;
    t0 = now_us();
    in_threads(&p, threads, free_main);
    double free_ms = (now_us() - t0) / 1e3;

    emit1("conc_sessions", n, "count");
    emit1("conc_started", atomic_load(&p.started), "count");
    emit1("conc_answered", atomic_load(&p.answered), "count");
    emit1("conc_start_all", all_ms, "ms");
    emit("conc_start_each", p.start_ms, n, "ms");
    emit1("conc_private_total", measured ? total_priv / 1024 : -1, "MiB");
    emit1("conc_private_each", measured ? total_priv / 1024 / measured : -1, "MiB");
    emit1("conc_descriptors", fds_after - fds_before, "count");
    emit1("conc_descriptors_each",
          atomic_load(&p.started) ? (double)(fds_after - fds_before) / atomic_load(&p.started) : -1,
          "count");
    emit1("conc_nofile_soft", nofile.rlim_cur == RLIM_INFINITY ? -1 : (double)nofile.rlim_cur,
          "count");
    emit1("conc_answer_all", answer_ms, "ms");
    emit1("conc_free_all", free_ms, "ms");
    if (atomic_load(&p.started) != n || atomic_load(&p.answered) != n)
        failures++;
    free(p.s);
    free(p.start_ms);
}

/* ------------------------------------------------------------ manifest */

static int counted(void *ctx, enum ci_manifest_finding what, const char *path, const char *detail)
{
    fprintf(stderr, "bench: manifest: %s %s\n", ci_manifest_finding_name(what), path);
    ++*(int *)ctx;
    return 0;
}

/* Runs @cmd with sh; 0 if it exited 0. */
static int sh(const char *cmd)
{
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void manifest_costs(void)
{
    char exe[4096], dir[] = "/tmp/ci-bench-manifest-XXXXXX", cmd[16384], m[4200], pub[4200];
    char *slash, *policy = NULL;
    struct ci_err err = {0};
    unsigned char pk[32], digest[32];
    size_t policy_len = 0;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    static double verify[N_VERIFY], hash[N_HASH], plain[N_PAIRS], with[N_PAIRS];
    int nv = 0, nh = 0, np = 0, findings = 0;
    struct ci_manifest_policy pol;

    /* build/bench/bench -> build/codeinterp-manifest */
    if (n <= 0 || !mkdtemp(dir)) {
        failures++;
        return;
    }
    exe[n] = '\0';
    for (int i = 0; i < 2 && (slash = strrchr(exe, '/')); i++)
        *slash = '\0';
    snprintf(m, sizeof m, "%s/default.json", dir);
    snprintf(pub, sizeof pub, "%s/bench.pub", dir);
    const char *packages = getenv("BENCH_MANIFEST_PACKAGES");
    if (!packages || !*packages)
        packages = "numpy,pandas,matplotlib";
    fprintf(stderr, "bench: manifest of %s, made and signed in %s\n", packages, dir);
    double t0 = now_us();
    snprintf(cmd, sizeof cmd,
             "cd %s && %s/codeinterp-manifest keygen bench && "
             "%s/codeinterp-manifest create --packages %s -o %s",
             dir, exe, exe, packages, m);
    if (sh(cmd) != 0) {
        fprintf(stderr, "bench: %s failed\n", cmd);
        failures++;
        goto out;
    }
    emit1("manifest_create", (now_us() - t0) / 1e3, "ms");
    snprintf(cmd, sizeof cmd, "%s/codeinterp-manifest sign --key %s/bench.key %s", exe, dir, m);
    if (sh(cmd) != 0 || ci_manifest_read_public_key(pub, pk, &err) != CI_OK) {
        fprintf(stderr, "bench: signing failed: %s\n", err.msg);
        failures++;
        goto out;
    }

    /* The host's part, once per new or changed manifest file. */
    for (int i = 0; i < N_VERIFY; i++) {
        double t = now_us();
        free(policy);
        policy = NULL;
        if (ci_manifest_verify(m, pk, &policy, &policy_len, digest, NULL, &err) != CI_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            failures++;
            goto out;
        }
        verify[nv++] = (now_us() - t) / 1e3;
    }
    emit("manifest_verify", verify, nv, "ms");

    /* The zygote's part, once per zygote: the same check, in-process. */
    if (ci_manifest_policy_parse(policy, policy_len, &pol, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        failures++;
        ci_manifest_policy_free(&pol);
        goto out;
    }
    emit1("manifest_files", (double)pol.n_files, "files");
    for (int i = 0; i < N_HASH; i++) {
        double t = now_us();
        if (ci_manifest_compare(&pol, counted, &findings) != 0)
            failures++;
        hash[nh++] = (now_us() - t) / 1e3;
    }
    ci_manifest_policy_free(&pol);
    emit("manifest_hash", hash, nh, "ms");

    /* Session ready, with and without, in turns; each config's first
     * session (its zygote's start) is timed on its own. */
    ci_config *cfg = ci_config_new();
    if (!cfg || ci_config_set_manifest(cfg, m, pub) != CI_OK) {
        failures++;
        ci_config_free(cfg);
        goto out;
    }
    ci_zygote_stop_all();
    {
        double ms;
        ci_session *s = start(cfg, &ms);
        if (!s) {
            ci_config_free(cfg);
            goto out;
        }
        emit1("manifest_zygote_first_new", ms, "ms");
        ci_session_free(s);
        s = start(NULL, &ms);
        if (s)
            emit1("manifest_plain_zygote_first_new", ms, "ms");
        ci_session_free(s);
    }
    fprintf(stderr, "bench: session ready with and without the manifest, n=%d each\n", N_PAIRS);
    for (int i = 0; i < N_PAIRS; i++) {
        for (int with_manifest = 0; with_manifest < 2; with_manifest++) {
            double t = now_us(), ms;
            ci_session *s = start(with_manifest ? cfg : NULL, &ms);
            ci_result *r = s ? run_ok(s, FIRST_CELL) : NULL;
            if (r) {
                if (with_manifest)
                    with[np] = (now_us() - t) / 1e3;
                else
                    plain[np] = (now_us() - t) / 1e3;
            }
            ci_result_free(r);
            ci_session_free(s);
        }
        np++;
    }
    ci_config_free(cfg);
    emit("manifest_ready_plain", plain, np, "ms");
    emit("manifest_ready_with", with, np, "ms");
out:
    free(policy);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
}

/* --------------------------------------------------------------- main */

/* Reads the modules of the package list @path (the first word of each
 * line that is not a comment) into @mods; their count, or -1. */
static int read_modules(const char *path, char mods[][128])
{
    char line[256];
    int n = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (n < MAX_MODULES && fgets(line, sizeof line, f))
        if (line[0] != '#' && sscanf(line, "%127s", mods[n]) == 1)
            n++;
    fclose(f);
    return n;
}

/* Runs @code as the first cell of a new session, PACE_MS after the last:
 * its round trip in *@ms and the unique memory it added in *@mib (-1 if
 * unreadable). 0, or -1 after counting a failure. */
static int first_cell(const char *code, double *ms, double *mib)
{
    double new_ms, before, after, rss;
    usleep(PACE_MS * 1000);
    ci_session *s = start(NULL, &new_ms);
    if (!s) {
        failures++;
        return -1;
    }
    int mem = smaps(ci_session_pid(s), &before, &rss) == 0;
    double t0 = now_us();
    ci_result *r = run_ok(s, code);
    *ms = (now_us() - t0) / 1e3;
    *mib = r && mem && smaps(ci_session_pid(s), &after, &rss) == 0 ? (after - before) / 1024 : -1;
    ci_result_free(r);
    ci_session_free(s);
    return r ? 0 : -1;
}

/* 8: each module's first import in a new session, and the set in one. */
static void package_imports(void)
{
    static char mods[MAX_MODULES][128];
    static double ms[MAX_MODULES][N_IMPORT], mib[MAX_MODULES][N_IMPORT];
    int got[MAX_MODULES] = {0}, gotmem[MAX_MODULES] = {0};
    const char *list = getenv("BENCH_PACKAGE_LIST") ? getenv("BENCH_PACKAGE_LIST")
                                                    : "tools/analysis_packages.txt";
    int n = read_modules(list, mods);
    if (n <= 0) {
        fprintf(stderr, "bench: no modules in %s\n", list);
        failures++;
        return;
    }
    fprintf(stderr, "bench: first import of %d modules in a new session, n=%d each\n", n,
            N_IMPORT);
    size_t cap = 1, len = 0;
    for (int i = 0; i < n; i++)
        cap += strlen(mods[i]) + 8;
    char *all = malloc(cap);
    for (int i = 0; all && i < n; i++)
        len += snprintf(all + len, cap - len, "import %s\n", mods[i]);
    for (int k = 0; k < N_IMPORT; k++) {
        for (int i = 0; i < n; i++) {
            char code[160];
            double t, m;
            snprintf(code, sizeof code, "import %s", mods[i]);
            if (first_cell(code, &t, &m) != 0)
                continue;
            ms[i][got[i]++] = t;
            if (m >= 0)
                mib[i][gotmem[i]++] = m;
        }
    }
    for (int i = 0; i < n; i++) {
        char key[160];
        snprintf(key, sizeof key, "import:%s", mods[i]);
        emit(key, ms[i], got[i], "ms");
        snprintf(key, sizeof key, "import_mem:%s", mods[i]);
        emit(key, mib[i], gotmem[i], "MiB");
    }

    /* The whole set, in one cell of a new session. */
    double all_ms[N_IMPORT], all_mib[N_IMPORT], m;
    int na = 0, nm = 0;
    for (int k = 0; all && k < N_IMPORT; k++) {
        if (first_cell(all, &all_ms[na], &m) != 0)
            continue;
        na++;
        if (m >= 0)
            all_mib[nm++] = m;
    }
    if (!all)
        failures++;
    free(all);
    emit("import_all", all_ms, na, "ms");
    emit("import_all_mem", all_mib, nm, "MiB");
}

/* Row 9: @make_path's cell (bench/snapshot_state.py) makes the session. */
static void snapshots(const char *make_path)
{
    char *make = slurp(make_path);
    double take[N_SNAPSHOT], back[N_SNAPSHOT], size = 0, base = 0;
    int n = 0;
    ci_session *s = make ? start(NULL, &size) : NULL;
    ci_result *r = s ? run_ok(s, make) : NULL;

    fprintf(stderr, "bench: snapshot and restore of 100 MB of DataFrame, n=%d\n", N_SNAPSHOT);
    free(make);
    if (!r) {
        if (!make)
            perror(make_path);
        failures++;
        ci_session_free(s);
        return;
    }
    base = atof(ci_result_value(r));
    ci_result_free(r);
    for (int i = 0; i < N_SNAPSHOT; i++) {
        void *data = NULL;
        size_t len = 0;
        ci_session *t = NULL;
        double t0 = now_us();
        int rc = ci_session_snapshot(s, &data, &len);
        double t1 = now_us();
        int rc2 = rc == CI_OK ? ci_session_restore(&t, NULL, data, len) : rc;
        double t2 = now_us();
        ci_result *check = rc2 == CI_OK ? run_ok(t, "frame.shape") : NULL;

        if (!check || strcmp(ci_result_value(check), "(1562500, 8)") != 0) {
            fprintf(stderr, "bench: snapshot round trip failed: %s %s: %s\n", ci_strerror(rc),
                    ci_strerror(rc2), rc != CI_OK ? ci_session_errmsg(s) : ci_session_errmsg(NULL));
            failures++;
        } else {
            take[n] = (t1 - t0) / 1e3;
            back[n] = (t2 - t1) / 1e3;
            size = (double)len;
            n++;
        }
        ci_result_free(check);
        ci_session_free(t);
        ci_free(data);
    }
    /* ci_session_fork of the same session, and its next trivial cell's
     * round trip before and after. */
    double forks[N_SNAPSHOT], before[N_SNAPSHOT], after[N_SNAPSHOT];
    int nf = 0;
    for (int i = 0; i < N_SNAPSHOT; i++) {
        ci_session *b = NULL;
        double t0 = now_us();
        ci_result *r1 = run_ok(s, "1+1");
        double t1 = now_us();
        int rc = ci_session_fork(s, &b);
        double t2 = now_us();
        ci_result *r2 = run_ok(s, "1+1");
        double t3 = now_us();

        if (rc != CI_OK || !r1 || !r2) {
            fprintf(stderr, "bench: fork failed: %s\n", ci_session_errmsg(s));
            failures++;
        } else {
            before[nf] = t1 - t0;
            forks[nf] = (t2 - t1) / 1e3;
            after[nf] = t3 - t2;
            nf++;
        }
        ci_result_free(r1);
        ci_result_free(r2);
        ci_session_free(b);
    }
    emit("fork", forks, nf, "ms");
    emit("fork_parent_before", before, nf, "us");
    emit("fork_parent_after", after, nf, "us");
    emit("snapshot_take", take, n, "ms");
    emit("snapshot_restore", back, n, "ms");
    if (n) {
        emit1("snapshot_bytes", size / (1 << 20), "MiB");
        emit1("snapshot_pickle_bytes", base / (1 << 20), "MiB");
    }
    ci_session_free(s);
}

/* Row 10: @make_path's cell (bench/snapshot_state.py) makes each session. */
static void rollbacks(const char *make_path)
{
    char *make = slurp(make_path);
    double on[N_ROLLBACK], off[N_ROLLBACK], fatal[N_SNAPSHOT], again[N_SNAPSHOT], ms;
    int n = 0, nf = 0;
    ci_config *cfg = ci_config_new();
    ci_session *with = NULL, *without = NULL;
    ci_result *r1 = NULL, *r2 = NULL;

    fprintf(stderr, "bench: rollback, 100 MB of DataFrame, n=%d\n", N_ROLLBACK);
    if (make && cfg && ci_config_set_rollback(cfg, 1) == CI_OK && (with = start(cfg, &ms)) &&
        (without = start(NULL, &ms))) {
        r1 = run_ok(with, make);
        r2 = run_ok(without, make);
    }
    if (!r1 || !r2 || !ci_session_rollback_active(with)) {
        fprintf(stderr, "bench: no session with rollback%s\n", make ? "" : " (no cell)");
        failures++;
        goto out;
    }
    for (int i = 0; i < N_ROLLBACK; i++) {
        double t0 = now_us();
        ci_result *a = run_ok(with, "1+1");
        double t1 = now_us();
        ci_result *b = run_ok(without, "1+1");
        double t2 = now_us();

        if (a && b) {
            on[n] = t1 - t0;
            off[n] = t2 - t1;
            n++;
        }
        ci_result_free(a);
        ci_result_free(b);
    }
    /* A fatal cell, rolled back, and the state checked; against a
     * restart and the frame made again. */
    for (int i = 0; i < N_SNAPSHOT; i++) {
        double t0 = now_us();
        ci_result *k = NULL, *c;

        ci_run(with, "import os; os._exit(1)", &k); /* KILLED, and rolled back */
        c = run_ok(with, "frame.shape");
        double t1 = now_us();
        int ok = k && ci_result_rolled_back(k) && c &&
                 strcmp(ci_result_value(c), "(1562500, 8)") == 0;
        ci_result *m = NULL;

        ci_result_free(k);
        ci_result_free(c);
        if (ok && ci_session_restart(without) == CI_OK && (m = run_ok(without, make))) {
            fatal[nf] = (t1 - t0) / 1e3;
            again[nf] = (now_us() - t1) / 1e3;
            nf++;
        } else {
            fprintf(stderr, "bench: rollback failed\n");
            failures++;
        }
        ci_result_free(m);
    }
    emit("rollback_cell_on", on, n, "us");
    emit("rollback_cell_off", off, n, "us");
    emit("rollback_fatal", fatal, nf, "ms");
    emit("rollback_restart_instead", again, nf, "ms");
out:
    ci_result_free(r1);
    ci_result_free(r2);
    ci_session_free(with);
    ci_session_free(without);
    ci_config_free(cfg);
    free(make);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s bench/workload.py\n", argv[0]);
        return 2;
    }
    char *workload = slurp(argv[1]), *slash = strrchr(argv[1], '/');
    char snapshot_cell[4096];

    /* Row 9's cell, beside the workload. */
    snprintf(snapshot_cell, sizeof snapshot_cell, "%.*ssnapshot_state.py",
             slash ? (int)(slash - argv[1] + 1) : 0, argv[1]);
    if (!workload) {
        perror(argv[1]);
        return 2;
    }
    int sessions = getenv("BENCH_SESSIONS") ? atoi(getenv("BENCH_SESSIONS")) : 1000;
    const char *only = getenv("BENCH_ONLY") ? getenv("BENCH_ONLY") : "";
    int only_concurrent = strcmp(only, "concurrent") == 0;
    int threads = getenv("BENCH_THREADS") ? atoi(getenv("BENCH_THREADS")) : 4;
    if (sessions < 1)
        sessions = 1;
    if (threads < 1 || threads > 64)
        threads = 4;

    /* Five descriptors a session (docs/configuration.md): 1000 sessions
     * need more than the usual soft limit of 1024, as any host of that
     * many would. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }

    if (only_concurrent) {
        concurrent(sessions, threads);
        return failures ? 1 : 0;
    }
    if (strcmp(only, "snapshot") == 0) {
        snapshots(snapshot_cell);
        return failures ? 1 : 0;
    }
    if (strcmp(only, "rollback") == 0) {
        rollbacks(snapshot_cell);
        return failures ? 1 : 0;
    }

    /* The process's first session starts the zygote. */
    {
        double ms;
        ci_session *s = start(NULL, &ms);
        if (!s)
            return 1;
        emit1("zygote_first_new", ms, "ms");
        ci_session_free(s);
    }

    /* The same start by fork + exec, without the zygote. */
    {
        static double exec_ready[N_EXEC];
        int ne = 0;
        ci_config *cfg = ci_config_new();
        fprintf(stderr, "bench: session ready without the zygote, n=%d\n", N_EXEC);
        if (!cfg || ci_config_set_zygote(cfg, 0) != CI_OK)
            failures++;
        for (int i = 0; cfg && i < N_EXEC; i++) {
            double t0 = now_us(), ms;
            ci_session *s = start(cfg, &ms);
            if (!s) {
                failures++;
                continue;
            }
            ci_result *r = run_ok(s, FIRST_CELL);
            if (r)
                exec_ready[ne++] = (now_us() - t0) / 1e3;
            ci_result_free(r);
            ci_session_free(s);
        }
        ci_config_free(cfg);
        emit("ready_exec", exec_ready, ne, "ms");
    }

    /* 1 and 3: session ready; idle memory after the first cell. */
    static double ready[N_READY], newonly[N_READY], first[N_READY], priv[N_READY], rss[N_READY];
    static double burst[N_READY];
    int nr = 0, nm = 0, nb = 0;
    ci_session *keep = NULL;
    fprintf(stderr, "bench: session ready, back to back then %d ms apart, n=%d each\n",
            PACE_MS, N_READY);
    for (int i = 0; i < 2 * N_READY; i++) {
        int paced = i >= N_READY;
        double new_ms;
        if (paced)
            usleep(PACE_MS * 1000);
        ci_session *s = start(NULL, &new_ms);
        if (!s) {
            failures++;
            continue;
        }
        double t1 = now_us();
        ci_result *r = run_ok(s, FIRST_CELL);
        double first_ms = (now_us() - t1) / 1e3;
        if (r && !paced) {
            burst[nb++] = new_ms + first_ms;
            ci_result_free(r);
            ci_session_free(s);
            continue;
        }
        if (r) {
            ready[nr] = new_ms + first_ms;
            newonly[nr] = new_ms;
            first[nr] = first_ms;
            nr++;
            if (smaps(ci_session_pid(s), &priv[nm], &rss[nm]) == 0) {
                priv[nm] /= 1024;
                rss[nm] /= 1024;
                nm++;
            } else {
                fprintf(stderr, "bench: cannot read /proc/%d/smaps_rollup\n", ci_session_pid(s));
            }
            ci_result_free(r);
        }
        if (i == 2 * N_READY - 1 && r)
            keep = s;
        else
            ci_session_free(s);
    }
    emit("ready_burst", burst, nb, "ms");
    emit("ready", ready, nr, "ms");
    emit("ready_new", newonly, nr, "ms");
    emit("ready_first_cell", first, nr, "ms");
    emit("idle_private", priv, nm, "MiB");
    emit("idle_rss", rss, nm, "MiB");
    if (!keep) {
        fprintf(stderr, "bench: no session started; stopping\n");
        return 1;
    }

    /* 2: trivial cell round trip, as the caller sees it. */
    fprintf(stderr, "bench: trivial cell, n=%d\n", N_TRIVIAL);
    static double triv[N_TRIVIAL];
    int nt = 0;
    for (int i = 0; i < N_WARMUP + N_TRIVIAL; i++) {
        double t0 = now_us();
        ci_result *r = run_ok(keep, "1+1");
        double t1 = now_us();
        if (!r)
            break;
        if (i >= N_WARMUP)
            triv[nt++] = t1 - t0;
        ci_result_free(r);
    }
    emit("trivial", triv, nt, "us");

    /* 5: the pandas workload: one untimed warm-up run, then n runs. */
    fprintf(stderr, "bench: pandas workload, n=%d (+1 warm-up)\n", N_WORKLOAD);
    double wl[N_WORKLOAD];
    int nw = 0;
    for (int i = 0; i < N_WORKLOAD + 1; i++) {
        ci_result *r = run_ok(keep, workload);
        if (!r)
            break;
        if (i > 0)
            wl[nw++] = ci_result_wall_time_us(r) / 1e3;
        ci_result_free(r);
    }
    emit("workload", wl, nw, "ms");

    /* 6: a 100 MiB file in and out. */
    fprintf(stderr, "bench: 100 MiB put/get, n=%d\n", N_FILE);
    unsigned char *buf = malloc(FILE_BYTES);
    double put[N_FILE], get[N_FILE];
    int nf = 0;
    if (buf) {
        for (size_t i = 0; i < FILE_BYTES; i++)
            buf[i] = (unsigned char)(i * 2654435761u >> 24);
        for (int i = 0; i < N_FILE; i++) {
            void *back = NULL;
            size_t len = 0;
            double t0 = now_us();
            int rc = ci_session_put_file(keep, "big.bin", buf, FILE_BYTES);
            double t1 = now_us();
            int rc2 = rc == CI_OK ? ci_session_get_file(keep, "big.bin", &back, &len) : rc;
            double t2 = now_us();
            if (rc != CI_OK || rc2 != CI_OK || len != FILE_BYTES ||
                memcmp(back, buf, FILE_BYTES) != 0) {
                fprintf(stderr, "bench: file round trip failed: %s %s\n", ci_strerror(rc),
                        ci_strerror(rc2));
                failures++;
                ci_free(back);
                break;
            }
            ci_free(back);
            put[nf] = (t1 - t0) / 1e3;
            get[nf] = (t2 - t1) / 1e3;
            nf++;
        }
        free(buf);
    } else {
        failures++;
    }
    emit("file_put", put, nf, "ms");
    emit("file_get", get, nf, "ms");
    ci_session_free(keep);

    /* 4: many sessions at once. */
    concurrent(sessions, threads);

    /* 7: what a signed package manifest costs. */
    manifest_costs();

    /* 8: the analyst's package set, imported. */
    package_imports();

    /* 9: snapshots. */
    snapshots(snapshot_cell);
    /* 10: rollback. */
    rollbacks(snapshot_cell);

    free(workload);
    if (failures)
        fprintf(stderr, "bench: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
