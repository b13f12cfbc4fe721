/*
 * The signed package manifest inside the worker. The host
 * verified the signature and hands over only the file list, as policy
 * text on descriptor 4 (lib/manifest.h). Here: reading it, checking the
 * installed files against it before CPython starts, and planning the
 * Landlock read rules derived from it (lockdown.c applies them; the
 * import hook that names the policy is in interp.c).
 *
 * The plan. A system directory Landlock would grant read-only whole
 * (/usr) that holds a search-path directory is carved instead: read-only
 * rules for every entry beside the way down to each search-path
 * directory, READ_DIR on the directory itself (so what a cell could list
 * it still can), and no rule for the search-path directories. Beneath
 * each of those, READ_FILE|READ_DIR on each largest directory whose every
 * file is listed, and READ_FILE on each other listed file: a file of an
 * unlisted package is then unreadable even by path. A search-path
 * directory nested in another (lib-dynload) is a boundary of the outer
 * one's walk, planned on its own.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "err.h"
#include "manifest.h"
#include "read_all.h"
#include "worker.h"

static struct ci_manifest_policy policy;
static int have_policy;
/* Per search-path directory: it needs a bind of its own (mounts.c). */
static unsigned char needs_bind[CI_MANIFEST_MAX_PATHS];

static struct {
    struct ci_manifest_rule *v;
    size_t n, cap;
} plan;
static int planned;

void ci_manifest_read(int fd)
{
    struct ci_err err;
    char *text = NULL;
    size_t len = 0;
    struct stat usr;

    if (ci_read_all(fd, CI_MANIFEST_POLICY_MAX, 0, &text, &len) != 0)
        ci_fatal(CI_EXIT_MANIFEST, "manifest: cannot read the policy on descriptor %d: %s", fd,
                 strerror(errno));
    close(fd);
    if (len > CI_MANIFEST_POLICY_MAX)
        ci_fatal(CI_EXIT_MANIFEST, "manifest: the policy is over %u bytes", CI_MANIFEST_POLICY_MAX);
    if (ci_manifest_policy_parse(text, len, &policy, &err) != 0)
        ci_fatal(CI_EXIT_MANIFEST, "manifest: %s", err.msg);
    free(text);
    have_policy = 1;

    /* Contained in the new root's bind of /usr only if beneath it and on
     * its mount (the bind is not recursive). */
    if (stat("/usr", &usr) != 0)
        usr.st_dev = (dev_t)-1;
    for (size_t i = 0; i < policy.n_search; i++) {
        struct stat st;

        needs_bind[i] = !(strncmp(policy.search_path[i], "/usr/", 5) == 0 &&
                          stat(policy.search_path[i], &st) == 0 && st.st_dev == usr.st_dev);
    }
}

const struct ci_manifest_policy *ci_manifest(void)
{
    return have_policy ? &policy : NULL;
}

int ci_manifest_needs_bind(size_t i)
{
    return i < policy.n_search && needs_bind[i];
}

static int report(void *ctx, enum ci_manifest_finding what, const char *path, const char *detail)
{
    size_t n = strlen(path);

    (void)ctx;
    switch (what) {
    case CI_MANIFEST_CHANGED:
        ci_fatal(CI_EXIT_MANIFEST, "manifest: %s changed since the manifest was signed (%s)",
                 path, detail ? detail : "SHA-256 differs");
    case CI_MANIFEST_MISSING:
        ci_fatal(CI_EXIT_MANIFEST, "manifest: %s is missing", path);
    case CI_MANIFEST_EXTRA:
        if (n > 4 && strcmp(path + n - 4, ".pth") == 0) {
            const char *slash = strrchr(path, '/');

            for (size_t i = 0; i < policy.n_search; i++)
                if (strlen(policy.search_path[i]) == (size_t)(slash - path) &&
                    strncmp(policy.search_path[i], path, (size_t)(slash - path)) == 0)
                    ci_fatal(CI_EXIT_MANIFEST, "manifest: %s is an unlisted .pth file in the "
                             "search path", path);
        }
        ci_fatal(CI_EXIT_MANIFEST, "manifest: %s is not listed: a file added after signing",
                 path);
    case CI_MANIFEST_UNREADABLE:
        ci_fatal(CI_EXIT_MANIFEST, "manifest: %s cannot be read: %s", path,
                 detail ? detail : "unknown error");
    case CI_MANIFEST_UNSAFE:
        ci_fatal(CI_EXIT_MANIFEST, "manifest: %s could be changed after the check: %s", path,
                 detail ? detail : "unsafe");
    }
    ci_fatal(CI_EXIT_MANIFEST, "manifest: %s: finding %d", path, (int)what);
}

void ci_manifest_check_files(void)
{
    if (!have_policy)
        return;
    if (ci_manifest_compare(&policy, report, NULL) < 0)
        ci_fatal(CI_EXIT_MANIFEST, "manifest: out of memory while checking the files");
}

int ci_manifest_listed(const char *path)
{
    return have_policy && ci_manifest_find(&policy, path) != NULL;
}

int ci_manifest_matches(const char *path, const void *data, size_t len)
{
    const struct ci_manifest_file *f = have_policy ? ci_manifest_find(&policy, path) : NULL;
    unsigned char h[32];

    if (!f)
        return -1;
    crypto_hash_sha256(h, data, (unsigned long long)len);
    return sodium_memcmp(h, f->sha256, sizeof h) == 0;
}

int ci_manifest_listed_beneath(const char *dir)
{
    size_t n = strlen(dir), lo = 0, hi;

    if (!have_policy)
        return 0;
    if (n == 1 && dir[0] == '/')
        return policy.n_files > 0;
    hi = policy.n_files;
    /* The first path not below "dir/" in strcmp order. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strncmp(policy.files[mid].path, dir, n);

        if (c < 0 || (c == 0 && (unsigned char)policy.files[mid].path[n] < '/'))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < policy.n_files && strncmp(policy.files[lo].path, dir, n) == 0 &&
           policy.files[lo].path[n] == '/';
}

/* ------------------------------------------------------------- plan */

/* Room for one more of @n items of @size bytes in *@v, which holds @cap;
 * out of memory is fatal. */
static void grow(void **v, size_t *cap, size_t n, size_t size)
{
    size_t ncap = *cap ? *cap * 2 : 64;
    void *nv;

    if (n < *cap)
        return;
    if (!(nv = realloc(*v, ncap * size)))
        ci_fatal(CI_EXIT_MANIFEST, "manifest: out of memory for the read rules");
    *v = nv;
    *cap = ncap;
}

static char *dup_path(const char *path, size_t len)
{
    char *p = strndup(path, len);

    if (!p)
        ci_fatal(CI_EXIT_MANIFEST, "manifest: out of memory for the read rules");
    return p;
}

static void add_rule(const char *path, size_t len, unsigned access, int follow)
{
    struct ci_manifest_rule *r;

    grow((void **)&plan.v, &plan.cap, plan.n, sizeof *plan.v);
    r = &plan.v[plan.n];
    r->path = dup_path(path, len);
    r->fd = -1;
    r->follow = follow;
    r->access = access;
    plan.n++;
}

static void drop_rules(size_t mark)
{
    while (plan.n > mark)
        free(plan.v[--plan.n].path);
}

static int is_search_dir(const char *path)
{
    for (size_t i = 0; i < policy.n_search; i++)
        if (strcmp(policy.search_path[i], path) == 0)
            return 1;
    return 0;
}

/* The search-path directories with every link resolved (NULL: missing). */
static char *resolved[CI_MANIFEST_MAX_PATHS];

static int is_resolved_search_dir(const char *path)
{
    for (size_t i = 0; i < policy.n_search; i++)
        if (resolved[i] && strcmp(resolved[i], path) == 0)
            return 1;
    return 0;
}

/* 1 if a resolved search-path directory lies strictly beneath @dir. */
static int above_search_dir(const char *dir)
{
    size_t n = strlen(dir);

    for (size_t i = 0; i < policy.n_search; i++)
        if (resolved[i] && strncmp(resolved[i], dir, n) == 0 &&
            (resolved[i][n] == '/' || (n == 1 && resolved[i][1])))
            return 1;
    return 0;
}

static unsigned char entry_type(const char *path, struct dirent *e)
{
    struct stat st;

    if (e->d_type != DT_UNKNOWN)
        return e->d_type;
    if (lstat(path, &st) != 0)
        return DT_UNKNOWN;
    return S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG
           : S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
}

/* The rules for listed links that lead out of their directory, added to
 * the plan once the walk is over. */
static struct {
    char **v;
    size_t n, cap;
} links;

static void add_link_rule(const char *path, size_t len)
{
    grow((void **)&links.v, &links.cap, links.n, sizeof *links.v);
    links.v[links.n++] = dup_path(path, len);
}

/* 1 if the link @path leads to a file in its own directory. */
static int link_beside(const char *path)
{
    char target[PATH_MAX];
    ssize_t t = readlink(path, target, sizeof target - 1);

    return t > 0 && !memchr(target, '/', (size_t)t) &&
           !(t <= 2 && target[0] == '.' && (t == 1 || target[1] == '.'));
}

/* Read-only rules for each entry of @path (a directory on the way down
 * to a search-path directory) that is neither one nor on the way to one.
 * Links get none: what they lead to has its own rule, or none. */
static void carve(char *path, size_t len)
{
    DIR *d = opendir(path);
    struct dirent *e;

    if (!d)
        return; /* nothing beneath it is readable then */
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        unsigned char type;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            len + 1 + n >= PATH_MAX)
            continue;
        if (len > 1)
            path[len] = '/';
        memcpy(path + len + (len > 1), e->d_name, n + 1);
        type = entry_type(path, e);
        if (is_resolved_search_dir(path))
            ; /* its own rules */
        else if (type == DT_DIR && above_search_dir(path))
            carve(path, len + (len > 1) + n);
        else if (type == DT_DIR || type == DT_REG)
            add_rule(path, len + (len > 1) + n, CI_MANIFEST_READ_FILE | CI_MANIFEST_READ_DIR, 0);
        path[len] = '\0';
    }
    closedir(d);
}

/*
 * The rules for the entries of the directory @path (of length @len),
 * beneath a search-path directory (@top: the search-path directory
 * itself, which never gets a rule of its own). Returns 1 if every file
 * beneath @path is listed; then, if
 * any is, the caller covers @path with one rule and the rules added here
 * are dropped. *@has: some listed file lies beneath.
 */
static int cover(char *path, size_t len, int top, int *has)
{
    DIR *d = opendir(path);
    struct dirent *e;
    size_t mark = plan.n;
    int full = 1;

    *has = 0;
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name), plen = len + 1 + n;
        unsigned char type;
        int sub_has;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (plen >= PATH_MAX) {
            full = 0;
            continue;
        }
        path[len] = '/';
        memcpy(path + len + 1, e->d_name, n + 1);
        type = entry_type(path, e);
        if (type == DT_DIR) {
            if (is_search_dir(path)) {
                full = 0; /* never swallowed: planned on its own */
            } else if (!top || ci_manifest_listed_beneath(path)) {
                int sub_full = cover(path, plen, 0, &sub_has);

                full &= sub_full;
                if (sub_has) {
                    *has = 1;
                    if (sub_full)
                        add_rule(path, plen, CI_MANIFEST_READ_FILE | CI_MANIFEST_READ_DIR, 0);
                }
            }
        } else if (type == DT_LNK && ci_manifest_listed(path) && !link_beside(path)) {
            /* Its target (Debian links some packages' files into
             * /usr/share) gets a rule of its own, kept whatever becomes
             * of this directory's. */
            *has = 1;
            add_link_rule(path, plen);
        } else if ((type == DT_REG || type == DT_LNK) && ci_manifest_listed(path)) {
            *has = 1;
            add_rule(path, plen, CI_MANIFEST_READ_FILE, type == DT_LNK);
        } else {
            full = 0;
        }
        path[len] = '\0';
    }
    closedir(d);
    if (!top && full && *has)
        drop_rules(mark);
    return full;
}

const struct ci_manifest_rule *ci_manifest_plan(const char *const *dirs, size_t n_dirs,
                                          int *carved, size_t *n)
{
    static char path[PATH_MAX];

    if (!have_policy) {
        *n = 0;
        return NULL;
    }
    if (planned)
        goto out;
    for (size_t i = 0; i < policy.n_search; i++)
        resolved[i] = realpath(policy.search_path[i], NULL);
    for (size_t i = 0; i < n_dirs; i++) {
        size_t len = strlen(dirs[i]);
        struct stat st;

        carved[i] = 0;
        if (len >= PATH_MAX || lstat(dirs[i], &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        for (size_t k = 0; k < policy.n_search && !carved[i]; k++)
            carved[i] = resolved[k] && strncmp(resolved[k], dirs[i], len) == 0 &&
                        (resolved[k][len] == '/' || resolved[k][len] == '\0');
        if (!carved[i])
            continue;
        add_rule(dirs[i], len, CI_MANIFEST_READ_DIR, 0);
        memcpy(path, dirs[i], len + 1);
        carve(path, len);
    }
    for (size_t i = 0; i < policy.n_search; i++) {
        size_t len = strlen(policy.search_path[i]);
        int has, inside = 0;

        if (!resolved[i])
            continue;
        /* Beneath a carved directory, READ_DIR comes from its rule. */
        for (size_t k = 0; k < n_dirs && !inside; k++) {
            size_t dl = strlen(dirs[k]);

            inside = carved[k] && strncmp(resolved[i], dirs[k], dl) == 0 &&
                     (resolved[i][dl] == '/' || resolved[i][dl] == '\0');
        }
        if (!inside)
            add_rule(policy.search_path[i], len, CI_MANIFEST_READ_DIR, 1);
        memcpy(path, policy.search_path[i], len + 1);
        cover(path, len, 1, &has);
    }
    for (size_t i = 0; i < links.n; i++) {
        add_rule(links.v[i], strlen(links.v[i]), CI_MANIFEST_READ_FILE, 1);
        free(links.v[i]);
    }
    free(links.v);
    planned = 1;
out:
    *n = plan.n;
    return plan.v;
}

void ci_manifest_hold(void)
{
    struct rlimit rl;

    if (!planned || plan.n == 0)
        return;
    /* Room for them beside the zygote's own few. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < plan.n + 64 &&
        rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    for (size_t i = 0; i < plan.n; i++) {
        struct ci_manifest_rule *r = &plan.v[i];

        r->fd = open(r->path, O_PATH | O_CLOEXEC | (r->follow ? 0 : O_NOFOLLOW));
        if (r->fd < 0 && errno == EMFILE)
            break; /* the rest are opened by path in each child */
    }
}
