/*
 * Session snapshots (ci_session_snapshot, ci_session_restore): the
 * worker pickles and loads the interpreter state (lib/worker/snapshot.py)
 * in runs that are no cell (run.c); the host adds the workspace's files,
 * which it reads and writes itself, and the format (snapshot_format.c)
 * that holds them. The host never reads the state, and takes a snapshot
 * it is given as hostile: it is parsed whole before any session starts,
 * its files are written through the session's own checks
 * (ci_session_put_file), and only a locked-down worker loads its state.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "errors.h"
#include "files.h"
#include "proto.h"
#include "resolve.h"
#include "result.h"
#include "run.h"
#include "session.h"
#include "snapshot.h"

/* The most entries a snapshot carries when the session has no inode quota. */
#define ENTRIES_MAX 1000000u
/* The most file bytes a snapshot carries when the session has no disk quota. */
#define FILE_BYTES_MAX (4ull << 30)

/* The largest state a session's worker can hold: within its memory limit. */
static size_t state_cap(const struct ci_config *cfg)
{
    return cfg->memory_limit < CI_STATE_MAX ? (size_t)cfg->memory_limit : CI_STATE_MAX;
}

static unsigned long long entries_cap(const struct ci_config *cfg)
{
    return cfg->inode_quota ? cfg->inode_quota : ENTRIES_MAX;
}

static unsigned long long file_bytes_cap(const struct ci_config *cfg)
{
    return cfg->disk_quota ? cfg->disk_quota : FILE_BYTES_MAX;
}

/* ------------------------------------------------------------- taking */

/* The list of what a snapshot leaves out, as it is made: UTF-8 lines. */
struct left_out {
    char *p;
    size_t len, cap;
    unsigned long long more; /* lines past CI_LEFT_OUT_MAX */
};

/* Appends @text (@n bytes), then @tail, as one line; a byte that is not
 * printable ASCII (a file name may hold any) is a '?'. Past
 * CI_LEFT_OUT_MAX a line is only counted, unless it is the @last. */
static int left_out_line(struct left_out *l, const char *text, size_t n, const char *tail,
                         int last)
{
    size_t need = n + strlen(tail) + 1;
    char *p;

    if (!last && l->len + need > CI_LEFT_OUT_MAX) {
        l->more++;
        return CI_OK;
    }
    if (l->len + need > l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        while (cap < l->len + need)
            cap *= 2;
        if (!(p = realloc(l->p, cap)))
            return CI_ENOMEM;
        l->p = p;
        l->cap = cap;
    }
    for (size_t i = 0; i < n; i++)
        l->p[l->len++] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    memcpy(l->p + l->len, tail, strlen(tail));
    l->len += strlen(tail);
    l->p[l->len++] = '\n';
    return CI_OK;
}

static int left_out_add(struct left_out *l, const char *text, size_t n, const char *tail)
{
    return left_out_line(l, text, n, tail, 0);
}

struct walk {
    ci_session *s;
    struct ci_snapshot_writer *w;
    struct left_out left;
    char path[CI_SNAP_PATH_MAX + 1];
    unsigned long long entries, bytes;
};

/* Reads the regular file @fd (@st its status) as a FILE section of the
 * path k->path (@plen bytes), or names it as left out. */
static int add_file(struct walk *k, int fd, size_t plen, const struct stat *st)
{
    unsigned char *rest;
    size_t at, got = 0, size = (size_t)st->st_size;
    int rc;

    if (st->st_nlink > 1)
        return left_out_add(&k->left, k->path, plen, ": a file with more than one hard link");
    if ((unsigned long long)st->st_size > k->s->cfg.file_limit)
        return left_out_add(&k->left, k->path, plen, ": a file over the file limit");
    if (k->bytes + size > file_bytes_cap(&k->s->cfg))
        return ci_err_set(&k->s->err, CI_ETOOBIG,
                          "the workspace's files are over the %llu bytes a snapshot carries",
                          file_bytes_cap(&k->s->cfg));
    rc = ci_snapshot_reserve_file(k->w, k->path, plen, (st->st_mode & S_IXUSR) != 0, size,
                                  &rest, &at);
    if (rc != CI_OK)
        return ci_err_set(&k->s->err, rc, "no room for the snapshot's files");
    /* A file the cell's thread cuts while it is read is carried as read. */
    while (got < size) {
        ssize_t n = read(fd, rest + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return ci_err_set(&k->s->err, CI_EIO, "cannot read %.*s: %s", (int)plen, k->path,
                              strerror(errno));
        if (n == 0)
            break;
        got += (size_t)n;
    }
    ci_snapshot_shrink(k->w, at, size - got);
    k->bytes += got;
    return CI_OK;
}

static int walk_dir(struct walk *k, int dirfd, size_t plen, unsigned depth);

/* The entry @name of @dirfd, whose path is k->path (@plen bytes). */
static int walk_entry(struct walk *k, int dirfd, const char *name, size_t plen, unsigned depth)
{
    struct stat st;
    int fd, rc;

    if (depth + 1 > CI_SNAP_DEPTH_MAX)
        return left_out_add(&k->left, k->path, plen, ": deeper than 64 directories");
    if (++k->entries > entries_cap(&k->s->cfg))
        return ci_err_set(&k->s->err, CI_ETOOBIG,
                          "the workspace holds more than the %llu entries a snapshot carries",
                          entries_cap(&k->s->cfg));
    fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            return left_out_add(&k->left, k->path, plen, ": a symbolic link");
        if (errno == ENOENT) /* gone since it was listed */
            return CI_OK;
        return left_out_add(&k->left, k->path, plen, ": cannot be opened");
    }
    if (fstat(fd, &st) != 0) {
        rc = left_out_add(&k->left, k->path, plen, ": cannot be read");
    } else if (S_ISREG(st.st_mode)) {
        rc = add_file(k, fd, plen, &st);
    } else if (!S_ISDIR(st.st_mode)) {
        rc = left_out_add(&k->left, k->path, plen, ": not a regular file or directory");
    } else {
        rc = ci_snapshot_add_dir(k->w, k->path, plen);
        rc = rc != CI_OK ? ci_err_set(&k->s->err, rc, "no room for the snapshot's files")
                         : walk_dir(k, fd, plen, depth + 1);
    }
    close(fd);
    return rc;
}

/* Each entry of the directory @dirfd, whose path is k->path (@plen
 * bytes, 0 for the workspace). */
static int walk_dir(struct walk *k, int dirfd, size_t plen, unsigned depth)
{
    int fd = dup(dirfd), rc = CI_OK;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *e;

    if (!d) {
        if (fd >= 0)
            close(fd);
        return ci_err_set(&k->s->err, CI_EIO, "cannot list the workspace: %s", strerror(errno));
    }
    while (rc == CI_OK && (e = readdir(d))) {
        size_t n = strlen(e->d_name), len = plen ? plen + 1 + n : n;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (len > CI_SNAP_PATH_MAX) {
            rc = left_out_add(&k->left, k->path, plen, "/...: a path over 4095 bytes");
            continue;
        }
        if (plen)
            k->path[plen] = '/';
        memcpy(k->path + (plen ? plen + 1 : 0), e->d_name, n);
        rc = walk_entry(k, dirfd, e->d_name, len, depth);
    }
    closedir(d);
    return rc;
}

/* The worker's list of what it left out, then the host's. The worker's
 * lines are its word: a control byte in them (but the newlines that end
 * them) reads as '?', as in the host's, so no name can look like more
 * than one line's start. */
static int add_left_out(struct ci_snapshot_writer *w, ci_result *r, struct left_out *l)
{
    char more[64] = "";
    char *worker = r->snap.left_out ? r->snap.left_out : "";

    for (char *c = worker; *c; c++)
        if ((unsigned char)*c < 0x20 && *c != '\n')
            *c = '?';

    if (l->more)
        snprintf(more, sizeof more, "... and %llu more files\n", l->more);
    if (!*worker && !l->len && !*more)
        return CI_OK;
    if (*more && left_out_line(l, more, strlen(more) - 1, "", 1) != CI_OK)
        return CI_ENOMEM;
    return ci_snapshot_add(w, CI_SNAP_LEFT_OUT, worker, strlen(worker), l->p, l->len);
}

/* Why @what ("taking the interpreter state") failed, from its run's
 * result: CI_EDEAD (the worker died), CI_ENOMEM, CI_EIO (stopped: the
 * timeout or an interrupt), or @error_code (it raised). */
static int run_failed(ci_session *s, const ci_result *r, const char *what, int error_code)
{
    const char *name = r->error_name ? r->error_name : "", *value = r->error_value ? r->error_value : "";

    switch (r->status) {
    case CI_STATUS_KILLED:
        return ci_err_set(&s->err, CI_EDEAD, "the worker died %s (%s: %s)", what, name, value);
    case CI_STATUS_MEMORY:
        return ci_err_set(&s->err, CI_ENOMEM,
                          "%s ran out of memory under the memory limit of %llu bytes (a state "
                          "needs about three times its size in memory to load, and twice to "
                          "be taken): %s",
                          what, s->cfg.memory_limit, value);
    case CI_STATUS_TIMEOUT:
        return ci_err_set(&s->err, CI_EIO, "%s ran past the session's timeout of %lu ms and was "
                          "stopped (ci_config_set_timeout_ms)", what, s->cfg.timeout_ms);
    case CI_STATUS_INTERRUPTED:
        return ci_err_set(&s->err, CI_EIO, "%s was interrupted", what);
    default:
        return ci_err_set(&s->err, error_code, "failed %s (%s: %s)", what, name, value);
    }
}

static int take(ci_session *s, void **data, size_t *len)
{
    struct walk k = {.s = s};
    struct ci_snapshot_writer w = {0};
    unsigned char *payload = NULL;
    ci_result *r = NULL;
    int rc, ws = -1;

    rc = ci_run_internal(s, CI_RUN_FLAG_SNAPSHOT, NULL, 0, NULL, 0, state_cap(&s->cfg), &r,
                         &payload);
    if (rc != CI_OK)
        return ci_err_set(&s->err, rc, "no memory for the snapshot");
    if ((rc = ci_audit_pickle_refusals(s, "snapshot", r)) != CI_OK)
        goto out;
    if (r->status != CI_STATUS_OK) {
        rc = run_failed(s, r, "taking the interpreter state", CI_EIO);
        goto out;
    }
    if (!payload || !r->snap.state) {
        rc = ci_err_set(&s->err, CI_EPROTO, "the worker's snapshot has no state");
        goto out;
    }
    /* The state stays where the frame put it: the snapshot is built
     * around it. */
    rc = ci_snapshot_begin_around(&w, payload, (size_t)(r->snap.state - payload),
                                  r->snap.state_len, r->snap.packages, strlen(r->snap.packages),
                                  (uint32_t)s->execution_count,
                                  r->snap.state_len + CI_PACKAGES_MAX + 2 * CI_LEFT_OUT_MAX + 4096 +
                                      file_bytes_cap(&s->cfg) +
                                      entries_cap(&s->cfg) *
                                          (CI_SNAP_HEADER_LEN + 8 + CI_SNAP_PATH_MAX));
    payload = NULL;
    r->snap.state = NULL;
    if (rc != CI_OK) {
        rc = ci_err_set(&s->err, rc, "no memory for the snapshot");
        goto out;
    }
    k.w = &w;
    if ((ws = ci_workspace_open(s)) < 0) {
        rc = ci_err_set(&s->err, CI_EIO, "cannot open the workspace: %s", strerror(errno));
        goto out;
    }
    {
        int dir = openat(ws, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = dir < 0 ? ci_err_set(&s->err, CI_EIO, "cannot open the workspace: %s",
                                  strerror(errno))
                     : walk_dir(&k, dir, 0, 0);
        if (dir >= 0)
            close(dir);
    }
    if (rc == CI_OK && (rc = add_left_out(&w, r, &k.left)) != CI_OK)
        rc = ci_err_set(&s->err, rc, "no memory for the snapshot");
    if (rc == CI_OK && (rc = ci_snapshot_end(&w)) != CI_OK)
        rc = ci_err_set(&s->err, rc, "no memory for the snapshot");
    /* Never hand out what the reader would refuse (a worker's forged
     * fields, or a bug here). */
    if (rc == CI_OK) {
        struct ci_snapshot_view v;
        const char *why;

        if (ci_snapshot_parse(w.p, w.len, &v, &why) != CI_OK)
            rc = ci_err_set(&s->err, CI_EIO, "the snapshot made is not one a restore reads: %s",
                            why);
    }
    if (rc == CI_OK) {
        *data = w.p;
        *len = w.len;
        w.p = NULL;
    }
out:
    if (ws >= 0)
        close(ws);
    free(w.p);
    free(k.left.p);
    free(payload);
    ci_result_free(r);
    return rc;
}

CI_API int ci_session_snapshot(ci_session *s, void **data, size_t *len)
{
    int expected = 0, rc;

    if (data)
        *data = NULL;
    if (len)
        *len = 0;
    if (!s)
        return CI_EINVAL;
    if (!data || !len)
        return ci_err_set(&s->err, CI_EINVAL, "%s is NULL", !data ? "data" : "len");
    if (!atomic_compare_exchange_strong(&s->busy, &expected, 1))
        return ci_err_set(&s->err, CI_EBUSY, "a run is in progress on this session");
    if (s->worker.pid <= 0)
        rc = ci_err_set(&s->err, CI_EDEAD, "the session's worker is dead; restart the session");
    else if (ci_audit_check(s) != CI_OK)
        rc = CI_EIO;
    else if ((rc = take(s, data, len)) != CI_OK)
        ci_audit_snapshot(s, "snapshot", NULL, 0, rc);
    else if ((rc = ci_audit_snapshot(s, "snapshot", *data, *len, CI_OK)) != CI_OK) {
        /* A snapshot the log cannot record is not handed out. */
        ci_free(*data);
        *data = NULL;
        *len = 0;
    }
    atomic_store(&s->busy, 0);
    return rc;
}

/* ------------------------------------------------------------ restoring */

/* Whether the snapshot @v fits a session of @cfg, before one starts. */
static int fits(const struct ci_config *cfg, const struct ci_snapshot_view *v, struct ci_err *err)
{
    struct ci_snapshot_entry e;
    size_t off = 0;

    if (v->state_len > state_cap(cfg))
        return ci_err_set(err, CI_ETOOBIG,
                          "the snapshot's interpreter state (%zu bytes) is over the memory limit "
                          "of %llu bytes",
                          v->state_len, cfg->memory_limit);
    if (v->entry_count > entries_cap(cfg))
        return ci_err_set(err, CI_ETOOBIG,
                          "the snapshot's %zu files and directories are over the %llu a session "
                          "holds (the inode quota)",
                          v->entry_count, entries_cap(cfg));
    if (v->file_bytes > file_bytes_cap(cfg))
        return ci_err_set(err, CI_ETOOBIG,
                          "the snapshot's files (%llu bytes) are over the disk quota of %llu bytes",
                          v->file_bytes, file_bytes_cap(cfg));
    while (ci_snapshot_next(v, &off, &e))
        if (e.len > cfg->file_limit)
            return ci_err_set(err, CI_ETOOBIG,
                              "a file of the snapshot (%zu bytes) is over the file limit of %llu",
                              e.len, cfg->file_limit);
    return CI_OK;
}

/* A DIR entry: a new directory in the workspace, the worker's. */
static int make_dir(ci_session *s, const char *path)
{
    const char *slash = strrchr(path, '/');
    int ws = ci_workspace_open(s), parent, rc = CI_OK;

    if (ws < 0)
        return ci_err_set(&s->err, CI_EIO, "cannot open the workspace: %s", strerror(errno));
    if (slash) {
        char *dir = strndup(path, (size_t)(slash - path));
        parent = dir ? ci_open_beneath(ws, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, 0) : -1;
        free(dir);
        close(ws);
    } else {
        parent = ws;
    }
    if (parent < 0)
        return ci_err_set(&s->err, CI_EINVAL,
                          "the snapshot's directory %.200s has no parent before it", path);
    if (mkdirat(parent, slash ? slash + 1 : path, 0700) != 0)
        rc = errno == EEXIST ? ci_err_set(&s->err, CI_EINVAL,
                                          "the snapshot names %.200s twice", path)
                             : ci_err_set(&s->err, CI_EIO, "cannot make %.200s: %s", path,
                                          strerror(errno));
    else if (ci_give_to_worker(parent, slash ? slash + 1 : path) < 0)
        rc = ci_err_set(&s->err, CI_EIO, "cannot give %.200s to the worker: %s", path,
                        strerror(errno));
    close(parent);
    return rc;
}

/* The snapshot's directories and files, into @s's empty workspace. */
static int put_entries(ci_session *s, const struct ci_snapshot_view *v)
{
    struct ci_snapshot_entry e;
    size_t off = 0;
    char path[CI_SNAP_PATH_MAX + 1];
    int rc = CI_OK;

    while (rc == CI_OK && ci_snapshot_next(v, &off, &e)) {
        int ws;

        memcpy(path, e.path, e.path_len);
        path[e.path_len] = '\0';
        if (e.is_dir) {
            rc = make_dir(s, path);
            continue;
        }
        /* put_file replaces: a name given twice is refused here. */
        if ((ws = ci_workspace_open(s)) < 0)
            return ci_err_set(&s->err, CI_EIO, "cannot open the workspace: %s", strerror(errno));
        if (faccessat(ws, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
            rc = ci_err_set(&s->err, CI_EINVAL, "the snapshot names %.200s twice", path);
        close(ws);
        if (rc == CI_OK)
            rc = ci_session_put_file(s, path, e.data, e.len);
        if (rc == CI_ENOENT || rc == CI_EUNSAFE)
            rc = ci_err_set(&s->err, CI_EINVAL,
                            "the snapshot's file %.200s has no directory before it", path);
        if (rc == CI_OK && e.mode == 0700 && (ws = ci_workspace_open(s)) >= 0) {
            int fd = ci_open_beneath(ws, path, O_RDONLY | O_CLOEXEC, 0);
            if (fd < 0 || fchmod(fd, 0700) != 0)
                rc = ci_err_set(&s->err, CI_EIO, "cannot set the mode of %.200s", path);
            if (fd >= 0)
                close(fd);
            close(ws);
        }
    }
    return rc;
}

/* Loads the state into @s's worker: a RESTORE run. */
static int load_state(ci_session *s, const struct ci_snapshot_view *v)
{
    unsigned char *head = malloc(4 + v->packages_len);
    uint32_t n = (uint32_t)v->packages_len;
    ci_result *r = NULL;
    int rc;

    if (!head)
        return ci_err_set(&s->err, CI_ENOMEM, "no memory to restore the snapshot");
    memcpy(head, &n, 4); /* host byte order: the channel's */
    memcpy(head + 4, v->packages, v->packages_len);
    rc = ci_run_internal(s, CI_RUN_FLAG_RESTORE, head, 4 + v->packages_len, v->state,
                         v->state_len, 0, &r, NULL);
    free(head);
    if (rc != CI_OK)
        return ci_err_set(&s->err, rc, "no memory to restore the snapshot");
    if ((rc = ci_audit_pickle_refusals(s, "restore", r)) != CI_OK) {
        ci_result_free(r);
        return rc;
    }
    if (r->status == CI_STATUS_ERROR && r->error_name &&
        strcmp(r->error_name, "SnapshotError") == 0)
        rc = ci_err_set(&s->err, CI_EINVAL, "%s", r->error_value ? r->error_value : "");
    else if (r->status != CI_STATUS_OK)
        rc = run_failed(s, r, "loading the snapshot's interpreter state", CI_EINVAL);
    ci_result_free(r);
    if (rc == CI_OK)
        s->execution_count = (int)v->count;
    return rc;
}

CI_API int ci_session_restore(ci_session **out, const ci_config *cfg, const void *data,
                              size_t len)
{
    struct ci_err *err = ci_thread_err();
    struct ci_snapshot_view v;
    struct ci_config defaults;
    const char *why;
    ci_session *s;
    int rc;

    if (out)
        *out = NULL;
    if (!out || !data)
        return ci_err_set(err, CI_EINVAL, "%s is NULL", !out ? "out" : "data");
    if (ci_snapshot_parse(data, len, &v, &why) != CI_OK)
        return ci_err_set(err, CI_EINVAL, "the snapshot is refused: %s", why);
    if (!cfg) {
        ci_config_defaults(&defaults);
        cfg = &defaults;
    }
    if ((rc = fits(cfg, &v, err)) != CI_OK)
        return rc;
    if ((rc = ci_session_new(&s, cfg)) != CI_OK)
        return rc;
    /* Recorded before any of it goes in, as a cell is before it runs. */
    rc = ci_audit_snapshot(s, "restore", data, len, CI_OK);
    if (rc == CI_OK)
        rc = put_entries(s, &v);
    if (rc == CI_OK)
        rc = load_state(s, &v);
    if (rc != CI_OK)
        ci_audit_snapshot(s, "restore_failed", NULL, 0, rc);
    if (rc != CI_OK) {
        ci_err_set(err, rc, "%s", s->err.msg);
        ci_session_free(s);
        return rc;
    }
    if (v.left_out_len && !(s->left_out = strndup(v.left_out, v.left_out_len))) {
        ci_session_free(s);
        return ci_err_set(err, CI_ENOMEM, "no memory for the list of what was left out");
    }
    *out = s;
    return CI_OK;
}

CI_API const char *ci_session_left_out(const ci_session *s)
{
    return s && s->left_out ? s->left_out : "";
}

CI_API int ci_session_fork(ci_session *s, ci_session **out)
{
    void *data = NULL;
    size_t len = 0;
    int rc;

    if (out)
        *out = NULL;
    if (!s)
        return CI_EINVAL;
    if (!out)
        return ci_err_set(&s->err, CI_EINVAL, "out is NULL");
    if ((rc = ci_session_snapshot(s, &data, &len)) != CI_OK)
        return rc;
    /* The copy is made: s is free again while the branch starts. */
    rc = ci_session_restore(out, &s->cfg, data, len);
    ci_free(data);
    if (rc != CI_OK)
        return ci_err_set(&s->err, rc, "the branch could not start: %s",
                          ci_thread_err()->msg);
    if ((rc = ci_audit_fork(s, *out)) != CI_OK) {
        /* A branch the log cannot record is not handed out. */
        ci_session_free(*out);
        *out = NULL;
    }
    return rc;
}

CI_API int ci_snapshot_left_out(const void *data, size_t len, char **list)
{
    struct ci_err *err = ci_thread_err();
    struct ci_snapshot_view v;
    const char *why;

    if (list)
        *list = NULL;
    if (!data || !list)
        return ci_err_set(err, CI_EINVAL, "%s is NULL", !data ? "data" : "list");
    if (ci_snapshot_parse(data, len, &v, &why) != CI_OK)
        return ci_err_set(err, CI_EINVAL, "the snapshot is refused: %s", why);
    if (!(*list = malloc(v.left_out_len + 1)))
        return ci_err_set(err, CI_ENOMEM, "no memory for the list");
    if (v.left_out_len)
        memcpy(*list, v.left_out, v.left_out_len);
    (*list)[v.left_out_len] = '\0';
    return CI_OK;
}
