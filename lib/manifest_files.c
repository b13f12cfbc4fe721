/*
 * The file list of a signed package manifest, as lib/manifest.h shares
 * it: parsing the policy text the host hands the worker, and comparing
 * the installed files with it (hashes, extra files, files others could
 * change). libc and libsodium only: built into the host library and,
 * with the worker's flags, into the worker.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "codeinterp.h"
#include "err.h"
#include "manifest.h"

int ci_manifest_path_valid(const char *path)
{
    size_t len = strlen(path);

    if (len < 1 || len > CI_MANIFEST_PATH_MAX || path[0] != '/')
        return 0;
    if (len > 1 && path[len - 1] == '/')
        return 0;
    for (const char *p = path; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return 0;
        if (*p != '/')
            continue;
        /* Each component: not empty, not "." nor "..". */
        if (p[1] == '/')
            return 0;
        if (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
            return 0;
        if (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
            return 0;
    }
    return 1;
}

static int cmp_file(const void *a, const void *b)
{
    const struct ci_manifest_file *x = a, *y = b;

    return strcmp(x->path, y->path);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; /* upper case too: the text is written in lower case only */
}

void ci_manifest_policy_free(struct ci_manifest_policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_search; i++)
        free(p->search_path[i]);
    for (size_t i = 0; i < p->n_files; i++)
        free(p->files[i].path);
    free(p->search_path);
    free(p->files);
    memset(p, 0, sizeof *p);
}

/* Every fault of the text is CI_EMANIFEST: it came from the host, and
 * only a bug or a changed host library makes it wrong. */
#define FAIL(...)                                                                          \
    do {                                                                                   \
        ci_err_set(err, CI_EMANIFEST, __VA_ARGS__);                                        \
        return -1;                                                                         \
    } while (0)

/* A copy of the path of @len bytes at @s, if it is a valid one. */
static char *take_path(const char *s, size_t len)
{
    char *path;

    if (len == 0 || len > CI_MANIFEST_PATH_MAX || memchr(s, '\0', len))
        return NULL;
    path = malloc(len + 1);
    if (!path)
        return NULL;
    memcpy(path, s, len);
    path[len] = '\0';
    if (!ci_manifest_path_valid(path)) {
        free(path);
        return NULL;
    }
    return path;
}

int ci_manifest_policy_parse(const char *text, size_t len, struct ci_manifest_policy *out,
                             struct ci_err *err)
{
    const size_t magic = sizeof CI_MANIFEST_POLICY_MAGIC - 1;
    const char *p = text + magic, *end = text + len;
    size_t cap = 0, line = 2;
    int ended = 0;

    memset(out, 0, sizeof *out);
    ci_err_clear(err);
    if (len < magic || memcmp(text, CI_MANIFEST_POLICY_MAGIC, magic) != 0)
        FAIL("policy: it does not start with \"codeinterp-policy 1\"");
    out->search_path = calloc(CI_MANIFEST_MAX_PATHS, sizeof *out->search_path);
    if (!out->search_path)
        FAIL("policy: out of memory");
    for (; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n;

        if (!nl)
            FAIL("policy: line %zu has no newline", line);
        n = (size_t)(nl - p);
        if (ended)
            FAIL("policy: text after \"end\" (line %zu)", line);
        if (n == 3 && memcmp(p, "end", 3) == 0) {
            ended = 1;
        } else if (n > 5 && memcmp(p, "path ", 5) == 0) {
            char *path;

            if (out->n_files > 0)
                FAIL("policy: line %zu: a path after the files", line);
            if (out->n_search == CI_MANIFEST_MAX_PATHS)
                FAIL("policy: more than %u search-path directories", CI_MANIFEST_MAX_PATHS);
            if (!(path = take_path(p + 5, n - 5)))
                FAIL("policy: line %zu: not a normalised absolute path", line);
            for (size_t i = 0; i < out->n_search; i++)
                if (strcmp(out->search_path[i], path) == 0) {
                    free(path);
                    FAIL("policy: line %zu: the search path lists a directory twice", line);
                }
            out->search_path[out->n_search++] = path;
        } else if (n > 5 + 64 + 1 && memcmp(p, "file ", 5) == 0 && p[5 + 64] == ' ') {
            struct ci_manifest_file *f;

            if (out->n_search == 0)
                FAIL("policy: line %zu: a file before any search-path directory", line);
            if (out->n_files == CI_MANIFEST_MAX_FILES)
                FAIL("policy: more than %u files", CI_MANIFEST_MAX_FILES);
            if (out->n_files == cap) {
                size_t ncap = cap ? cap * 2 : 1024;
                void *nf = realloc(out->files, ncap * sizeof *out->files);

                if (!nf)
                    FAIL("policy: out of memory");
                out->files = nf;
                cap = ncap;
            }
            f = &out->files[out->n_files];
            for (int i = 0; i < 32; i++) {
                int hi = hexval(p[5 + 2 * i]), lo = hexval(p[6 + 2 * i]);

                if (hi < 0 || lo < 0)
                    FAIL("policy: line %zu: a SHA-256 that is not 64 lower-case hex digits",
                         line);
                f->sha256[i] = (unsigned char)(hi << 4 | lo);
            }
            if (!(f->path = take_path(p + 5 + 64 + 1, n - 5 - 64 - 1)))
                FAIL("policy: line %zu: not a normalised absolute path", line);
            out->n_files++;
        } else {
            FAIL("policy: line %zu is not \"path\", \"file\" or \"end\"", line);
        }
        p = nl + 1;
    }
    if (!ended)
        FAIL("policy: no \"end\" line");
    if (out->n_search == 0)
        FAIL("policy: no search-path directory");
    if (out->n_files > 1)
        qsort(out->files, out->n_files, sizeof *out->files, cmp_file);
    for (size_t i = 1; i < out->n_files; i++)
        if (strcmp(out->files[i - 1].path, out->files[i].path) == 0)
            FAIL("policy: it lists %s twice", out->files[i].path);
    return 0;
}

const struct ci_manifest_file *ci_manifest_find(const struct ci_manifest_policy *p,
                                                const char *path)
{
    struct ci_manifest_file key = {.path = (char *)path};

    if (!p->n_files)
        return NULL;
    return bsearch(&key, p->files, p->n_files, sizeof *p->files, cmp_file);
}

int ci_manifest_sha256_file(const char *path, unsigned char out[32], unsigned long long *size)
{
    crypto_hash_sha256_state st;
    unsigned char buf[64 * 1024];
    unsigned long long total = 0;
    struct stat sb;
    int fd, err;
    ssize_t n;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) != 0) {
        err = errno;
        goto fail;
    }
    if (!S_ISREG(sb.st_mode)) {
        err = EISDIR;
        goto fail;
    }
    crypto_hash_sha256_init(&st);
    for (;;) {
        n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            err = errno;
            goto fail;
        }
        if (n == 0)
            break;
        crypto_hash_sha256_update(&st, buf, (unsigned long long)n);
        total += (unsigned long long)n;
    }
    crypto_hash_sha256_final(&st, out);
    close(fd);
    if (size)
        *size = total;
    return 0;
fail:
    close(fd);
    errno = err;
    return -1;
}

const char *ci_manifest_finding_name(enum ci_manifest_finding what)
{
    switch (what) {
    case CI_MANIFEST_CHANGED:
        return "changed";
    case CI_MANIFEST_MISSING:
        return "missing";
    case CI_MANIFEST_EXTRA:
        return "extra";
    case CI_MANIFEST_UNREADABLE:
        return "unreadable";
    case CI_MANIFEST_UNSAFE:
        return "unsafe";
    }
    return "unknown";
}

/* ------------------------------------------------------------ extras */

struct strlist {
    char **v;
    size_t n, cap;
};

static int strlist_add(struct strlist *l, const char *s, size_t len)
{
    char *c;

    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64;
        void *nv = realloc(l->v, ncap * sizeof *l->v);

        if (!nv)
            return -1;
        l->v = nv;
        l->cap = ncap;
    }
    if (!(c = malloc(len + 1)))
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    l->v[l->n++] = c;
    return 0;
}

static void strlist_free(struct strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The search-path directory @path lies strictly beneath and nearest to,
 * or -1. */
static long nearest_search_dir(const struct ci_manifest_policy *p, const char *path)
{
    long best = -1;
    size_t best_len = 0;

    for (size_t i = 0; i < p->n_search; i++) {
        size_t n = strlen(p->search_path[i]);

        if (n > best_len && strncmp(path, p->search_path[i], n) == 0 && path[n] == '/') {
            best = (long)i;
            best_len = n;
        }
    }
    return best;
}

static int is_search_dir(const struct ci_manifest_policy *p, const char *path)
{
    for (size_t i = 0; i < p->n_search; i++)
        if (strcmp(p->search_path[i], path) == 0)
            return 1;
    return 0;
}

struct scan {
    const struct ci_manifest_policy *p;
    struct strlist extra;    /* unlisted files found */
    struct strlist unread;   /* directories that could not be read */
    char path[PATH_MAX];
};

/* Every regular file or link beneath the directory @s->path (of length
 * @len) that is not listed, not crossing into a nested search-path
 * directory. -1 if memory ran out. */
static int scan_tree(struct scan *s, size_t len)
{
    DIR *d = opendir(s->path);
    struct dirent *e;
    int rc = 0;

    if (!d)
        return strlist_add(&s->unread, s->path, len);
    while (rc == 0 && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        unsigned char type = e->d_type;
        struct stat st;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (len + 1 + n >= sizeof s->path) {
            rc = strlist_add(&s->unread, s->path, len);
            continue;
        }
        s->path[len] = '/';
        memcpy(s->path + len + 1, e->d_name, n + 1);
        if (type == DT_UNKNOWN) {
            if (lstat(s->path, &st) != 0)
                type = DT_UNKNOWN;
            else if (S_ISDIR(st.st_mode))
                type = DT_DIR;
            else if (S_ISREG(st.st_mode))
                type = DT_REG;
            else if (S_ISLNK(st.st_mode))
                type = DT_LNK;
        }
        if (type == DT_DIR) {
            if (!is_search_dir(s->p, s->path))
                rc = scan_tree(s, len + 1 + n);
        } else if ((type == DT_REG || type == DT_LNK) && !ci_manifest_find(s->p, s->path)) {
            rc = strlist_add(&s->extra, s->path, len + 1 + n);
        }
        s->path[len] = '\0';
    }
    closedir(d);
    return rc;
}

/* 1 if some listed file lies beneath @dir (strictly) and nearest to the
 * search-path directory @sd. */
static int holds_listed(const struct ci_manifest_policy *p, const char *dir, long sd)
{
    size_t n = strlen(dir), lo = 0, hi = p->n_files;

    /* The first path >= "dir/": the files beneath dir follow it. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(p->files[mid].path, dir, n);

        if (c < 0 || (c == 0 && (unsigned char)p->files[mid].path[n] < '/'))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < p->n_files; lo++) {
        const char *f = p->files[lo].path;

        if (strncmp(f, dir, n) != 0 || f[n] != '/')
            return 0;
        if (nearest_search_dir(p, f) == sd)
            return 1;
    }
    return 0;
}

/* The extras among the entries of search-path directory number @sd
 * (its path in s->path, @len bytes): the trees of listed packages, and
 * unlisted *.pth files. */
static int scan_entries(struct scan *s, long sd, size_t len)
{
    DIR *d = opendir(s->path);
    struct dirent *e;
    int rc = 0;

    if (!d)
        return 0; /* a missing search-path directory: its listed files are missing */
    while (rc == 0 && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        struct stat st;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            len + 1 + n >= sizeof s->path)
            continue;
        s->path[len] = '/';
        memcpy(s->path + len + 1, e->d_name, n + 1);
        if (lstat(s->path, &st) != 0) {
            s->path[len] = '\0';
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            /* __pycache__ has its own rule (scan_pycache). */
            if (strcmp(e->d_name, "__pycache__") != 0 && !is_search_dir(s->p, s->path) &&
                holds_listed(s->p, s->path, sd))
                rc = scan_tree(s, len + 1 + n);
        } else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && n > 4 &&
                   strcmp(e->d_name + n - 4, ".pth") == 0 && !ci_manifest_find(s->p, s->path)) {
            rc = strlist_add(&s->extra, s->path, len + 1 + n);
        }
        s->path[len] = '\0';
    }
    closedir(d);
    return rc;
}

/* The extras in __pycache__ of search-path directory @dir (@len bytes):
 * <name>.*.pyc files whose <name>.py is listed. */
static int scan_pycache(struct scan *s, const char *dir, size_t len)
{
    size_t plen = len + sizeof "/__pycache__" - 1;
    struct dirent *e;
    DIR *d;
    int rc = 0;

    if (plen + 1 >= sizeof s->path)
        return 0;
    memcpy(s->path, dir, len);
    memcpy(s->path + len, "/__pycache__", sizeof "/__pycache__");
    if (!(d = opendir(s->path)))
        return 0;
    while (rc == 0 && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        const char *dot = strchr(e->d_name, '.');
        char py[PATH_MAX];
        struct stat st;

        if (n < 5 || !dot || dot == e->d_name || strcmp(e->d_name + n - 4, ".pyc") != 0 ||
            plen + 1 + n >= sizeof s->path)
            continue;
        s->path[plen] = '/';
        memcpy(s->path + plen + 1, e->d_name, n + 1);
        if (lstat(s->path, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
            !ci_manifest_find(s->p, s->path) &&
            snprintf(py, sizeof py, "%s/%.*s.py", dir, (int)(dot - e->d_name), e->d_name) <
                (int)sizeof py &&
            ci_manifest_find(s->p, py))
            rc = strlist_add(&s->extra, s->path, plen + 1 + n);
        s->path[plen] = '\0';
    }
    closedir(d);
    return rc;
}

/* The extras of search-path directory number @sd. */
static int scan_search_dir(struct scan *s, long sd)
{
    const char *dir = s->p->search_path[sd];
    size_t len = strlen(dir);
    int rc;

    if (len >= sizeof s->path)
        return 0;
    memcpy(s->path, dir, len + 1);
    if ((rc = scan_entries(s, sd, len)) != 0)
        return rc;
    return scan_pycache(s, dir, len);
}

/* 1 if a directory of mode @mode lets others than its owner replace
 * what it holds: writable by group or others, and not sticky. */
static int dir_open_to_others(mode_t mode)
{
    return (mode & (S_IWGRP | S_IWOTH)) && !(mode & S_ISVTX);
}

/*
 * Why the listed file @path could be changed after the check by others
 * than its owner, in @why; 0 if it could not. Checked on the file itself,
 * through any link (a listed link may lead anywhere:
 * /etc/python3.11/sitecustomize.py on Debian): writable by group or
 * others, or in a directory where others could replace it. Directories
 * beneath the search-path directory are linked_dir()'s. Owners are not
 * compared: in the worker's user namespace every unmapped owner, root
 * included, reads as the overflow uid.
 */
static int unsafe_file(const char *path, char *why, size_t whylen)
{
    struct stat st, dir;
    char *real, *slash;
    int bad = 0;

    if (stat(path, &st) != 0)
        return 0; /* the hash said it was there; gone now, found next time */
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, whylen, "writable by its group or by others (mode %o)",
                 (unsigned)(st.st_mode & 07777));
        return 1;
    }
    if (!(real = realpath(path, NULL)))
        return 0;
    if ((slash = strrchr(real, '/')) && slash != real) {
        *slash = '\0';
        if (stat(real, &dir) == 0 && dir_open_to_others(dir.st_mode)) {
            snprintf(why, whylen, "its directory %s is writable by others than its owner", real);
            bad = 1;
        }
    }
    free(real);
    return bad;
}

/*
 * The first directory from the search-path directory nearest above @path
 * down to @path's own that is a symbolic link (1) or that others than its
 * owner could change (2), in @link (PATH_MAX bytes); 0 if there is none,
 * or @path lies beneath no search-path directory. A listed package
 * reached through a link would hide the link target's other files from
 * the scan for extra files, which never follows links: a .pyc planted
 * beside a listed .py would then run. @checked is the last parent
 * directory found sound (files come sorted, so most share it), updated
 * here.
 */
static int linked_dir(const struct ci_manifest_policy *p, const char *path, char *link,
                      char *checked)
{
    long sd = nearest_search_dir(p, path);
    const char *slash = strrchr(path, '/');
    size_t parent = (size_t)(slash - path), start;
    struct stat st;

    if (sd < 0 || parent >= PATH_MAX)
        return 0;
    if (strlen(checked) == parent && strncmp(checked, path, parent) == 0)
        return 0;
    start = strlen(p->search_path[sd]);
    for (size_t i = start; i <= parent; i++) {
        if (i < parent && path[i] != '/')
            continue;
        memcpy(link, path, i);
        link[i] = '\0';
        if (lstat(link, &st) != 0)
            continue; /* the file's own check says it is missing */
        if (i > start && S_ISLNK(st.st_mode))
            return 1;
        if (S_ISDIR(st.st_mode) && dir_open_to_others(st.st_mode))
            return 2;
    }
    memcpy(checked, path, parent);
    checked[parent] = '\0';
    return 0;
}

/* One listed file's SHA-256, or the errno that kept it from being read. */
struct hashed {
    unsigned char h[32];
    int err;
};

struct hash_job {
    const struct ci_manifest_policy *p;
    struct hashed *out;
    size_t from, to;
};

static void *hash_range(void *arg)
{
    struct hash_job *j = arg;

    for (size_t i = j->from; i < j->to; i++)
        j->out[i].err = ci_manifest_sha256_file(j->p->files[i].path, j->out[i].h, NULL) ? errno : 0;
    return NULL;
}

/*
 * Hashes every listed file into @out, on two threads when there are many:
 * SHA-256 is the cost of a zygote's start (about 0.35 s per 100 MB here),
 * and libsodium's is one core's. Joined before it returns, so a caller
 * that is single-threaded stays so.
 */
static void hash_all(const struct ci_manifest_policy *p, struct hashed *out)
{
    struct hash_job a = {p, out, 0, p->n_files}, b = a;
    pthread_t tid;
    int threaded = 0;

    if (p->n_files >= 256) {
        a.to = b.from = p->n_files / 2;
        threaded = pthread_create(&tid, NULL, hash_range, &b) == 0;
        if (!threaded)
            a.to = p->n_files;
    }
    hash_range(&a);
    if (threaded)
        pthread_join(tid, NULL);
}

/* Reports each listed file that is not as listed: behind a linked or
 * open directory, missing, unreadable, changed, or open to others. The
 * number reported, or -1 if memory ran out; *@stop is set when @report
 * asked to stop. */
static long report_listed(const struct ci_manifest_policy *p, ci_manifest_report report,
                          void *ctx, int *stop)
{
    char link[PATH_MAX], checked[PATH_MAX] = "", why[PATH_MAX + 64];
    struct hashed *hashed = calloc(p->n_files ? p->n_files : 1, sizeof *hashed);
    long found = 0;

    if (!hashed)
        return -1;
    hash_all(p, hashed);
    for (size_t i = 0; i < p->n_files && !*stop; i++) {
        const unsigned char *h = hashed[i].h;
        const char *path = p->files[i].path;

        int linked = linked_dir(p, path, link, checked);

        if (linked == 1) {
            found++;
            snprintf(why, sizeof why, "%s, a directory on its path, is a symbolic link", link);
            *stop = report(ctx, CI_MANIFEST_CHANGED, path, why);
        } else if (linked == 2) {
            found++;
            snprintf(why, sizeof why, "its directory %s is writable by others than its owner",
                     link);
            *stop = report(ctx, CI_MANIFEST_UNSAFE, path, why);
        } else if (hashed[i].err) {
            int err = hashed[i].err;

            found++;
            if (err == ENOENT || err == ENOTDIR || err == EISDIR || err == ELOOP)
                *stop = report(ctx, CI_MANIFEST_MISSING, path, NULL);
            else
                *stop = report(ctx, CI_MANIFEST_UNREADABLE, path, strerror(err));
        } else if (sodium_memcmp(h, p->files[i].sha256, 32) != 0) {
            found++;
            *stop = report(ctx, CI_MANIFEST_CHANGED, path, NULL);
        } else if (unsafe_file(path, why, sizeof why)) {
            found++;
            *stop = report(ctx, CI_MANIFEST_UNSAFE, path, why);
        }
    }
    free(hashed);
    return found;
}

/* Reports every extra file, then every directory of a listed package
 * that could not be read, each kind in path order. The number reported,
 * or -1 if memory ran out. */
static long report_extras(const struct ci_manifest_policy *p, ci_manifest_report report,
                          void *ctx)
{
    struct scan *s = calloc(1, sizeof *s);
    long found = 0;
    int stop = 0;

    if (!s)
        return -1;
    s->p = p;
    for (size_t i = 0; i < p->n_search; i++)
        if (scan_search_dir(s, (long)i) != 0) {
            found = -1;
            goto out;
        }
    /* qsort's array may not be NULL, even when empty (C11 7.22.5). */
    if (s->extra.n > 1)
        qsort(s->extra.v, s->extra.n, sizeof *s->extra.v, cmp_str);
    if (s->unread.n > 1)
        qsort(s->unread.v, s->unread.n, sizeof *s->unread.v, cmp_str);
    for (size_t i = 0; i < s->extra.n && !stop; i++) {
        found++;
        stop = report(ctx, CI_MANIFEST_EXTRA, s->extra.v[i], NULL);
    }
    for (size_t i = 0; i < s->unread.n && !stop; i++) {
        found++;
        stop = report(ctx, CI_MANIFEST_UNREADABLE, s->unread.v[i],
                      "a directory of a listed package that cannot be read");
    }
out:
    strlist_free(&s->extra);
    strlist_free(&s->unread);
    free(s);
    return found;
}

long ci_manifest_compare(const struct ci_manifest_policy *p, ci_manifest_report report, void *ctx)
{
    int stop = 0;
    long listed, extras;

    /* SHA-256 needs no CPU detection, but the rest of libsodium may. */
    if (sodium_init() < 0)
        return -1;
    listed = report_listed(p, report, ctx, &stop);
    if (listed < 0 || stop)
        return listed;
    extras = report_extras(p, report, ctx);
    return extras < 0 ? -1 : listed + extras;
}
