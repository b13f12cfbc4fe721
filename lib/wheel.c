/*
 * %pip install from a signed wheelhouse (wheel.h): the host installs, the
 * worker only asks. A wheel is read once into memory, so the bytes that
 * are hashed are the bytes that are unpacked; its SHA-256 must be the one
 * the verified manifest lists for its file name. libarchive reads the
 * zip (a wheel is one, PEP 427) from that memory, twice: first every
 * entry is checked (a plain file or directory, a relative path without
 * "..", within the caps, no top-level name that a manifest module has),
 * then it is unpacked into <session>/site through descriptors, each file
 * created with O_EXCL, so that nothing already there is replaced and no
 * link is followed. A failed or stopped install removes what it made.
 * Nothing of a wheel is run: its .data/scripts, headers and data are not
 * installed, only purelib and platlib.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <jansson.h>
#include <sodium.h>

#include "errors.h"
#include "manifest.h"
#include "manifest_cache.h"
#include "manifest_doc.h"
#include "proto.h"
#include "wheel.h"
#include "worker_start.h"

/* ------------------------------------------------------------ start */

int ci_wheelhouse_check(ci_session *s)
{
    struct stat st;

    if (!s->cfg.wheelhouse)
        return CI_OK;
    if (!s->cfg.manifest)
        return ci_err_set(&s->err, CI_EMANIFEST,
                          "the wheelhouse %s needs a signed package manifest that lists its "
                          "wheels (ci_config_set_manifest; codeinterp-manifest create "
                          "--wheelhouse)",
                          s->cfg.wheelhouse);
    if (stat(s->cfg.wheelhouse, &st) != 0)
        return ci_err_set(&s->err, CI_EMANIFEST, "the wheelhouse %s cannot be read: %s",
                          s->cfg.wheelhouse, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return ci_err_set(&s->err, CI_EMANIFEST, "the wheelhouse %s is not a directory",
                          s->cfg.wheelhouse);
    if (s->verified_manifest && s->verified_manifest->n_wheels == 0)
        return ci_err_set(&s->err, CI_EMANIFEST,
                          "the wheelhouse %s is set, but the manifest %s lists no wheels: "
                          "make it with codeinterp-manifest create --wheelhouse %s, and sign it",
                          s->cfg.wheelhouse, s->cfg.manifest, s->cfg.wheelhouse);
    return CI_OK;
}

/*
 * What the host makes in the site directory is the host's, and readable
 * by the worker only: a root host's worker reads it through its group
 * (CI_WORKER_GID; directories 0750, files 0640), an unprivileged host's,
 * which has the host's uid, through the owner bits (0700, 0600). The
 * worker never writes it: its mode, a read-only bind and a Landlock read
 * rule each say so. 0, or -1 with errno.
 */
static int give_to_worker(int fd, int dir)
{
    int root = geteuid() == 0;

    if (root && fchown(fd, 0, CI_WORKER_GID) < 0)
        return -1;
    return fchmod(fd, dir ? (root ? 0750 : 0700) : (root ? 0640 : 0600));
}

int ci_site_make(const ci_session *s, int dirfd)
{
    int fd, rc;

    if (!s->cfg.wheelhouse)
        return 0;
    if (mkdirat(dirfd, CI_SITE_DIR, 0700) < 0)
        return -1;
    fd = openat(dirfd, CI_SITE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    rc = give_to_worker(fd, 1);
    close(fd);
    return rc;
}

int ci_install_parse(const unsigned char *p, size_t len, uint32_t *op, const char **arg,
                     size_t *arg_len, const char **why)
{
    if (len < sizeof *op) {
        *why = "an install request without its operation";
        return -1;
    }
    memcpy(op, p, sizeof *op);
    *arg = (const char *)p + sizeof *op;
    *arg_len = len - sizeof *op;
    if (*op == CI_INSTALL_LIST && *arg_len == 0)
        return 0;
    if (*op == CI_INSTALL_WHEEL && *arg_len >= 1 && *arg_len <= CI_INSTALL_ARG_MAX &&
        !memchr(*arg, '\0', *arg_len))
        return 0;
    *why = *op == CI_INSTALL_LIST || *op == CI_INSTALL_WHEEL
               ? "an install request with a malformed argument"
               : "an install request of an unknown operation";
    return -1;
}

/* ------------------------------------------------------------ answers */

static void answer(struct ci_install_reply *out, uint32_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void answer(struct ci_install_reply *out, uint32_t status, const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    free(out->data);
    out->status = status;
    out->data = n < 0 ? NULL : msg;
    out->len = n < 0 ? 0 : (size_t)n;
    if (out->len > CI_CALL_MESSAGE_MAX)
        out->len = CI_CALL_MESSAGE_MAX; /* a long file name, cut */
}

/* DONE with @obj's compact JSON (stolen). */
static void answer_json(struct ci_install_reply *out, json_t *obj)
{
    char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;

    json_decref(obj);
    if (!text || strlen(text) > CI_INSTALL_REPLY_MAX) {
        free(text);
        answer(out, CI_INSTALL_FAILED, "the host ran out of memory");
        return;
    }
    free(out->data);
    out->status = CI_INSTALL_DONE;
    out->data = text;
    out->len = strlen(text);
}

static void site_path(const ci_session *s, char *out, size_t n)
{
    snprintf(out, n, "%s/" CI_SITE_DIR, s->dir);
}

static void list_wheels(ci_session *s, struct ci_install_reply *out)
{
    const struct ci_manifest_verified *m = s->verified_manifest;
    json_t *obj = json_object(), *arr = json_array();
    char site[PATH_MAX];
    int bad = !obj || !arr;

    site_path(s, site, sizeof site);
    for (size_t i = 0; !bad && i < m->n_wheels; i++) {
        const struct ci_manifest_wheel *w = &m->wheels[i];
        json_t *req = json_array(), *one = json_object();

        for (size_t j = 0; req && j < w->n_requires; j++)
            bad |= json_array_append_new(req, json_string(w->requires[j]));
        bad |= !one || !req || json_object_set_new(one, "file", json_string(w->file)) ||
               json_object_set_new(one, "name", json_string(w->name)) ||
               json_object_set_new(one, "version", json_string(w->version)) ||
               json_object_set(one, "requires", req) || json_array_append(arr, one);
        json_decref(req);
        json_decref(one);
    }
    if (bad || json_object_set_new(obj, "site", json_string(site)) ||
        json_object_set(obj, "wheels", arr)) {
        json_decref(obj);
        obj = NULL;
    }
    json_decref(arr);
    answer_json(out, obj);
}

/* -------------------------------------------------------- the entries */

/*
 * Where entry @name of a wheel goes in the site directory: *@to is
 * @name, or for "<dist>.data/purelib/..." and ".../platlib/..." what
 * follows; NULL for the other .data parts, which are not installed.
 * 0, or -1 with @why when @name is not a safe relative path.
 */
static int entry_target(const char *name, const char **to, const char **why)
{
    const char *p, *slash;
    size_t n = strlen(name);

    *to = name;
    if (n == 0 || name[0] == '/' || n > CI_MANIFEST_PATH_MAX / 2) {
        *why = "an absolute, empty or overlong path";
        return -1;
    }
    for (p = name; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\') {
            *why = "a control character or backslash in a path";
            return -1;
        }
    for (p = name; *p; p = slash + 1) {
        slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if ((len == 0 && slash && slash[1]) || (len == 1 && p[0] == '.') ||
            (len == 2 && p[0] == '.' && p[1] == '.')) {
            *why = "an empty, '.' or '..' path component";
            return -1;
        }
        if (!slash)
            break;
    }
    slash = strchr(name, '/');
    if (slash && slash - name > 5 && !memcmp(slash - 5, ".data", 5)) {
        if (!strncmp(slash + 1, "purelib/", 8) || !strncmp(slash + 1, "platlib/", 8))
            *to = slash + 9;
        else
            *to = NULL;
        if (*to && !**to)
            *to = NULL; /* the purelib directory itself */
    }
    return 0;
}

/* The length of @path's first component. */
static size_t top_len(const char *path)
{
    const char *slash = strchr(path, '/');
    return slash ? (size_t)(slash - path) : strlen(path);
}

/* 1 if the component of @len bytes at @top is a dist-info directory. */
static int is_dist_info(const char *top, size_t len)
{
    return len > 10 && !memcmp(top + len - 10, ".dist-info", 10);
}

/*
 * 1 if the manifest lists a module of the top-level name @mod (@len
 * bytes, the first component up to its first '.') directly in a
 * search-path directory: "<dir>/<mod>/..." or "<dir>/<mod>.<suffix>".
 * The files are sorted by path, so each is a lower-bound search.
 */
static int manifest_has_module(const struct ci_manifest_policy *p, const char *mod, size_t len)
{
    char key[PATH_MAX];

    for (size_t d = 0; d < p->n_search; d++) {
        for (int sep = 0; sep < 2; sep++) {
            int n = snprintf(key, sizeof key, "%s/%.*s%c", p->search_path[d], (int)len, mod,
                             sep ? '.' : '/');
            size_t lo = 0, hi = p->n_files;

            if (n < 0 || (size_t)n >= sizeof key)
                continue;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(p->files[mid].path, key) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            /* A file of <mod>/; or <mod>.py, <mod>.<tag>.so, but not a
             * file of a directory <mod>.libs/. */
            for (; lo < p->n_files && !strncmp(p->files[lo].path, key, (size_t)n); lo++)
                if (!sep || !strchr(p->files[lo].path + n, '/'))
                    return 1;
        }
    }
    return 0;
}

struct plan {
    unsigned long long bytes;
    size_t files;
    char dist_info[256]; /* the wheel's .dist-info directory */
};

/* An entry's path: UTF-8, as a wheel's names are (PEP 427), whatever
 * the host's locale; libarchive's own conversion as the fallback. */
static const char *entry_name(struct archive_entry *e)
{
    const char *name = archive_entry_pathname_utf8(e);
    return name ? name : archive_entry_pathname(e);
}

/* The next entry's header; ARCHIVE_OK also for the warning libarchive
 * gives when a UTF-8 name has no form in the host's locale (the C
 * locale, say): entry_name() reads the UTF-8 form. */
static int next_entry(struct archive *a, struct archive_entry **e)
{
    int r = archive_read_next_header(a, e);
    return r == ARCHIVE_WARN && archive_entry_pathname_utf8(*e) ? ARCHIVE_OK : r;
}

static struct archive *open_wheel(const unsigned char *data, size_t len)
{
    struct archive *a = archive_read_new();

    if (!a)
        return NULL;
    if (archive_read_support_format_zip(a) != ARCHIVE_OK ||
        archive_read_open_memory(a, data, len) != ARCHIVE_OK) {
        archive_read_free(a);
        return NULL;
    }
    return a;
}

/* The first pass: every entry checked, nothing written. REFUSED with the
 * reason in @out, or 0 with @plan filled. */
static int check_entries(const unsigned char *data, size_t len, const char *file,
                         const struct ci_manifest_policy *policy, struct plan *plan,
                         struct ci_install_reply *out)
{
    struct archive *a = open_wheel(data, len);
    struct archive_entry *e;
    const char *why, *to;
    size_t entries = 0;
    int r;

    memset(plan, 0, sizeof *plan);
    if (!a) {
        answer(out, CI_INSTALL_FAILED, "the host cannot read %s as a zip archive", file);
        return -1;
    }
    while ((r = next_entry(a, &e)) == ARCHIVE_OK) {
        const char *name = entry_name(e);
        mode_t type = archive_entry_filetype(e);
        char shown[CI_MANIFEST_SHOWN_MAX];

        if (++entries > CI_WHEEL_ENTRIES_MAX) {
            answer(out, CI_INSTALL_REFUSED, "%s has more than %u entries", file,
                   CI_WHEEL_ENTRIES_MAX);
            goto refused;
        }
        if (!name || entry_target(name, &to, &why) < 0) {
            answer(out, CI_INSTALL_REFUSED, "%s has an entry that is not safe to install (%s): "
                   "%s", file, name ? why : "no name", name ? ci_manifest_shown(name, shown,
                                                                              sizeof shown) : "");
            goto refused;
        }
        if ((type != AE_IFREG && type != AE_IFDIR) || archive_entry_hardlink(e)) {
            answer(out, CI_INSTALL_REFUSED, "%s has an entry that is not a plain file or "
                   "directory (a link or a device): %s", file,
                   ci_manifest_shown(name, shown, sizeof shown));
            goto refused;
        }
        if (!to)
            continue;
        size_t tl = top_len(to);
        if (is_dist_info(to, tl)) {
            if (tl >= sizeof plan->dist_info ||
                (plan->dist_info[0] && strncmp(plan->dist_info, to, tl)) ||
                (plan->dist_info[0] && plan->dist_info[tl])) {
                answer(out, CI_INSTALL_REFUSED, "%s has more than one .dist-info directory "
                       "or an overlong one", file);
                goto refused;
            }
            memcpy(plan->dist_info, to, tl);
            plan->dist_info[tl] = '\0';
        } else if (policy) {
            const char *dot = memchr(to, '.', tl);
            size_t ml = dot ? (size_t)(dot - to) : tl;
            if (ml && manifest_has_module(policy, to, ml)) {
                answer(out, CI_INSTALL_REFUSED, "%s would shadow the module '%.*s', which the "
                       "signed package manifest provides; a session cannot replace it", file,
                       (int)ml, to);
                goto refused;
            }
        }
        if (type == AE_IFREG) {
            la_int64_t size = archive_entry_size(e);
            plan->files++;
            plan->bytes += size > 0 ? (unsigned long long)size : 0;
            if (plan->bytes > CI_WHEEL_UNPACKED_MAX) {
                answer(out, CI_INSTALL_REFUSED, "%s unpacks to more than %llu MiB", file,
                       CI_WHEEL_UNPACKED_MAX >> 20);
                goto refused;
            }
        }
    }
    if (r != ARCHIVE_EOF) {
        answer(out, CI_INSTALL_FAILED, "the host cannot read %s: %s", file,
               archive_error_string(a) ? archive_error_string(a) : "a broken zip archive");
        goto refused;
    }
    archive_read_free(a);
    if (!plan->dist_info[0]) {
        answer(out, CI_INSTALL_REFUSED, "%s has no .dist-info directory: it is not a wheel",
               file);
        return -1;
    }
    return 0;
refused:
    archive_read_free(a);
    return -1;
}

/* ------------------------------------------------------- the unpacking */

/* What an install made, in order, for undoing it: paths relative to the
 * site directory, a trailing '/' for a directory. */
struct made {
    char **path;
    size_t n, cap;
};

static int made_add(struct made *m, const char *path, size_t len, int dir)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        char **p = realloc(m->path, cap * sizeof *p);
        if (!p)
            return -1;
        m->path = p;
        m->cap = cap;
    }
    if (!(m->path[m->n] = malloc(len + 2)))
        return -1;
    memcpy(m->path[m->n], path, len);
    m->path[m->n][len] = dir ? '/' : '\0';
    m->path[m->n][len + 1] = '\0';
    m->n++;
    return 0;
}

/* Removes what @m lists, newest first, and frees it. */
static void undo(int site, struct made *m)
{
    while (m->n > 0) {
        char *p = m->path[--m->n];
        size_t len = strlen(p);
        int dir = len && p[len - 1] == '/';
        if (dir)
            p[len - 1] = '\0';
        unlinkat(site, p, dir ? AT_REMOVEDIR : 0);
        free(p);
    }
    free(m->path);
    m->path = NULL;
    m->cap = 0;
}

/*
 * Opens (making it if it is missing) each directory of @path's first
 * @len bytes beneath @site, never through a link: a new descriptor, or
 * -1 with errno.
 */
static int open_dirs(int site, const char *path, size_t len, struct made *m)
{
    int fd = dup(site);
    size_t at = 0;

    while (fd >= 0 && at < len) {
        const char *slash = memchr(path + at, '/', len - at);
        size_t end = slash ? (size_t)(slash - path) : len;
        char part[NAME_MAX + 1];
        int next;

        if (end - at > NAME_MAX) {
            close(fd);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(part, path + at, end - at);
        part[end - at] = '\0';
        if (mkdirat(fd, part, 0700) == 0) {
            if (made_add(m, path, end, 1) < 0) {
                close(fd);
                errno = ENOMEM;
                return -1;
            }
        } else if (errno != EEXIST) {
            close(fd);
            return -1;
        }
        next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = next;
        if (fd >= 0 && give_to_worker(fd, 1) < 0) {
            close(fd);
            return -1;
        }
        at = end + 1;
    }
    return fd;
}

/* Writes the current entry's data to the new file @to beneath @site: at
 * most @declared bytes (the size the zip's header gave it, which the
 * first pass counted against the caps), asking @stop every MiB. 0, or -1
 * with errno (EEXIST: a file already there; EFBIG: more data than
 * declared; EINTR: stopped). */
static int write_file(struct archive *a, int site, const char *to, long long declared,
                      int (*stop)(void *), void *stop_arg, struct made *m)
{
    const char *slash = strrchr(to, '/');
    int dir = slash ? open_dirs(site, to, (size_t)(slash - to), m) : dup(site);
    const char *base = slash ? slash + 1 : to;
    char buf[65536];
    long long written = 0, asked = 0;
    ssize_t n;
    int fd, rc = 0;

    if (dir < 0)
        return -1;
    fd = openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        close(dir);
        return -1;
    }
    if (made_add(m, to, strlen(to), 0) < 0) {
        unlinkat(dir, base, 0);
        close(fd);
        close(dir);
        errno = ENOMEM;
        return -1;
    }
    close(dir);
    if (give_to_worker(fd, 0) < 0)
        rc = -1;
    while (rc == 0 && (n = archive_read_data(a, buf, sizeof buf)) != 0) {
        if (n < 0) {
            errno = EIO;
            rc = -1;
            break;
        }
        if ((written += n) > (declared > 0 ? declared : 0)) {
            errno = EFBIG; /* a zip whose header understates an entry */
            rc = -1;
            break;
        }
        if (stop && written - asked >= (1 << 20)) {
            asked = written;
            if (stop(stop_arg)) {
                errno = EINTR;
                rc = -1;
                break;
            }
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(fd, buf + off, (size_t)(n - off));
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                rc = -1;
                break;
            }
            off += w;
        }
    }
    if (close(fd) < 0 && rc == 0)
        rc = -1;
    return rc;
}

/* The second pass. 0, or -1 with the answer in @out and nothing left. */
static int unpack(ci_session *s, const unsigned char *data, size_t len, const char *file,
                  int site, int (*stop)(void *), void *stop_arg, struct ci_install_reply *out)
{
    struct archive *a = open_wheel(data, len);
    struct archive_entry *e;
    struct made m = {0};
    const char *to, *why;
    int r;

    if (!a) {
        answer(out, CI_INSTALL_FAILED, "the host cannot read %s as a zip archive", file);
        return -1;
    }
    while ((r = next_entry(a, &e)) == ARCHIVE_OK) {
        const char *name = entry_name(e);
        int fd;

        if (stop && stop(stop_arg)) {
            answer(out, CI_INSTALL_STOPPED, "stopped");
            out->len = 0;
            goto failed;
        }
        if (entry_target(name, &to, &why) < 0)
            goto broken; /* checked in the first pass: the archive changed? */
        if (!to)
            continue;
        if (archive_entry_filetype(e) == AE_IFDIR) {
            size_t n = strlen(to);
            while (n && to[n - 1] == '/')
                n--;
            if ((fd = open_dirs(site, to, n, &m)) < 0)
                goto write_failed;
            close(fd);
            continue;
        }
        if (write_file(a, site, to, archive_entry_size(e), stop, stop_arg, &m) < 0)
            goto write_failed;
    }
    if (r != ARCHIVE_EOF)
        goto broken;
    archive_read_free(a);
    for (size_t i = 0; i < m.n; i++)
        free(m.path[i]);
    free(m.path);
    return 0;
write_failed:
    if (errno == EINTR) {
        answer(out, CI_INSTALL_STOPPED, "stopped");
        out->len = 0;
    } else if (errno == EFBIG)
        answer(out, CI_INSTALL_REFUSED, "%s has an entry that unpacks to more than its zip "
               "header says: %s", file, to);
    else if (errno == ENOSPC || errno == EDQUOT)
        answer(out, CI_INSTALL_FAILED, "installing %s would exceed the session's %s (%llu MiB, "
               "%llu inodes)", file, s->quota_dev ? "disk quota" : "free disk space",
               s->cfg.disk_quota >> 20, s->cfg.inode_quota);
    else if (errno == EEXIST)
        answer(out, CI_INSTALL_REFUSED, "%s would replace a file that is already installed: "
               "%s", file, to);
    else
        answer(out, CI_INSTALL_FAILED, "the host cannot install %s (%s): %s", file, to,
               strerror(errno));
    goto failed;
broken:
    answer(out, CI_INSTALL_FAILED, "the host cannot read %s: %s", file,
           archive_error_string(a) ? archive_error_string(a) : "a broken zip archive");
failed:
    archive_read_free(a);
    undo(site, &m);
    return -1;
}

/* ------------------------------------------------------------ a wheel */

/*
 * The version of the distribution @name installed in @site, from its
 * "<name>-<version>.dist-info" directory (PEP 427 escapes '-' in the name
 * as '_'), into @version; 1 if there is one, else 0.
 */
static int installed_version(int site, const char *name, char *version, size_t n)
{
    char want[CI_MANIFEST_NAME_MAX + 1], have[256];
    int fd = dup(site), found = 0;
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    struct dirent *e;

    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    ci_manifest_normalise_name(name, want);
    while (!found && (e = readdir(d))) {
        const char *dash = strchr(e->d_name, '-');
        size_t len = strlen(e->d_name);
        if (!dash || len < 11 || strcmp(e->d_name + len - 10, ".dist-info") ||
            (size_t)(dash - e->d_name) >= sizeof have)
            continue;
        memcpy(have, e->d_name, (size_t)(dash - e->d_name));
        have[dash - e->d_name] = '\0';
        ci_manifest_normalise_name(have, have);
        if (!strcmp(have, want)) {
            snprintf(version, n, "%.*s", (int)(len - 10 - (size_t)(dash + 1 - e->d_name)),
                     dash + 1);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

static const struct ci_manifest_wheel *listed(const struct ci_manifest_verified *m,
                                              const char *file)
{
    for (size_t i = 0; i < m->n_wheels; i++)
        if (!strcmp(m->wheels[i].file, file))
            return &m->wheels[i];
    return NULL;
}

/* The wheel @file of the wheelhouse, read whole into *@data (malloc'ed),
 * *@len bytes. 0, or -1 with the answer in @out. */
static int read_wheel(const ci_session *s, const char *file, unsigned char **data, size_t *len,
                      struct ci_install_reply *out)
{
    int dir = open(s->cfg.wheelhouse, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
    struct stat st;
    size_t have = 0;

    fd = dir < 0 ? -1 : openat(dir, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (dir >= 0)
        close(dir);
    if (fd < 0) {
        answer(out, CI_INSTALL_FAILED, "the wheelhouse's %s cannot be read: %s", file,
               strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (unsigned long long)st.st_size > CI_WHEEL_FILE_MAX) {
        answer(out, CI_INSTALL_REFUSED, "the wheelhouse's %s is not a regular file of at most "
               "%llu MiB", file, CI_WHEEL_FILE_MAX >> 20);
        close(fd);
        return -1;
    }
    /* One byte more than it said, to see it grow. */
    if (!(*data = malloc((size_t)st.st_size + 1))) {
        close(fd);
        answer(out, CI_INSTALL_FAILED, "the host ran out of memory reading %s", file);
        return -1;
    }
    for (;;) {
        ssize_t n = read(fd, *data + have, (size_t)st.st_size + 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n < 0) {
                answer(out, CI_INSTALL_FAILED, "the wheelhouse's %s cannot be read: %s", file,
                       strerror(errno));
                close(fd);
                free(*data);
                return -1;
            }
            break;
        }
        have += (size_t)n;
        if (have > (size_t)st.st_size)
            break;
    }
    close(fd);
    *len = have;
    return 0;
}

static void install_wheel(ci_session *s, const char *file, int (*stop)(void *), void *stop_arg,
                          struct ci_install_reply *out)
{
    const struct ci_manifest_wheel *w = listed(s->verified_manifest, file);
    struct ci_manifest_policy policy = {0};
    unsigned char *data = NULL, sum[32];
    char site_name[PATH_MAX], shown[CI_MANIFEST_SHOWN_MAX], want[65], got[65];
    char version[256] = "";
    struct plan plan;
    size_t len = 0;
    int site = -1;
    struct stat st;

    if (!w) {
        answer(out, CI_INSTALL_REFUSED, "the wheel %s is not listed in the session's signed "
               "package manifest", ci_manifest_shown(file, shown, sizeof shown));
        return;
    }
    if (read_wheel(s, file, &data, &len, out) < 0)
        return;
    crypto_hash_sha256(sum, data, len);
    if (sodium_memcmp(sum, w->sha256, sizeof sum) != 0) {
        sodium_bin2hex(want, sizeof want, w->sha256, sizeof sum);
        sodium_bin2hex(got, sizeof got, sum, sizeof sum);
        answer(out, CI_INSTALL_REFUSED, "the wheelhouse's %s changed since the package "
               "manifest was signed (SHA-256 %s, listed %s): it is not installed", file, got,
               want);
        goto done;
    }
    if (ci_manifest_policy_parse(s->verified_manifest->text, s->verified_manifest->len, &policy,
                                 NULL) != 0) {
        answer(out, CI_INSTALL_FAILED, "the host cannot read the session's manifest");
        goto done;
    }
    if (check_entries(data, len, file, &policy, &plan, out) < 0)
        goto done;
    site_path(s, site_name, sizeof site_name);
    site = open(site_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (site < 0) {
        answer(out, CI_INSTALL_FAILED, "the session's site directory cannot be opened: %s",
               strerror(errno));
        goto done;
    }
    if (installed_version(site, w->name, version, sizeof version) ||
        fstatat(site, plan.dist_info, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        answer(out, CI_INSTALL_REFUSED, "%s %s is already installed in this session; a session "
               "cannot replace or remove an installed package", w->name,
               version[0] ? version : w->version);
        goto done;
    }
    if (unpack(s, data, len, file, site, stop, stop_arg, out) < 0)
        goto done;
    json_t *obj = json_pack("{s:s, s:s, s:I, s:I}", "installed", w->name, "version", w->version,
                            "files", (json_int_t)plan.files, "bytes", (json_int_t)plan.bytes);
    answer_json(out, obj);
done:
    if (site >= 0)
        close(site);
    ci_manifest_policy_free(&policy);
    free(data);
}

void ci_install_serve(ci_session *s, uint32_t op, const char *arg, size_t arg_len,
                      int (*stop)(void *), void *stop_arg, struct ci_install_reply *out)
{
    char file[CI_INSTALL_ARG_MAX + 1];

    out->status = CI_INSTALL_FAILED;
    out->data = NULL;
    out->len = 0;
    if (!s->cfg.wheelhouse || !s->verified_manifest) {
        answer(out, CI_INSTALL_REFUSED, "package installation is not enabled in this session "
               "(the host set no wheelhouse)");
        return;
    }
    if (op == CI_INSTALL_LIST) {
        list_wheels(s, out);
        return;
    }
    memcpy(file, arg, arg_len);
    file[arg_len] = '\0';
    /* A wheel's names are UTF-8, which libarchive converts to the
     * locale's charset and refuses where it has no form (the C locale of
     * most hosts): this thread reads in C.UTF-8 meanwhile, and nothing of
     * the host program's locale changes. Without it, such a name fails. */
    locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    locale_t before = utf8 ? uselocale(utf8) : (locale_t)0;
    install_wheel(s, file, stop, stop_arg, out);
    if (utf8) {
        uselocale(before);
        freelocale(utf8);
    }
}
