/*
 * Which workspace files a run created or modified: the workspace's regular
 * files before and after the run, compared by inode, size, modification
 * and change time.
 *
 * The host scans rather than watches: inotify needs a watch per directory,
 * races with directories a cell creates and fills at once, and overflows;
 * fanotify needs CAP_SYS_ADMIN. A scan of a notebook's workspace (tens of
 * files) costs microseconds, and limits bound a hostile one.
 *
 * Timestamps come from a clock that ticks every few milliseconds (or finer
 * since Linux 6.13's multigrain timestamps), so a file rewritten with the
 * same size within one tick of the scan would look unchanged; as git does
 * with its "racy" index entries, ci_snapshot_settle() waits out that tick
 * before the next cell may write.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define MAX_DEPTH 32
#define MAX_ENTRIES 100000

struct scan {
    struct ci_snapshot *snap;
    size_t cap;
    size_t entries; /* directory entries seen, of any kind */
    int nomem;
};

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
    if (a->tv_sec != b->tv_sec)
        return a->tv_sec < b->tv_sec ? -1 : 1;
    return (a->tv_nsec > b->tv_nsec) - (a->tv_nsec < b->tv_nsec);
}

static int add_file(struct scan *sc, const char *name, const struct stat *st)
{
    struct ci_snapshot *snap = sc->snap;
    struct ci_file_state *f;

    if (snap->count == sc->cap) {
        size_t cap = sc->cap ? 2 * sc->cap : 64;
        struct ci_file_state *grown = realloc(snap->files, cap * sizeof *grown);
        if (!grown)
            return -1;
        snap->files = grown;
        sc->cap = cap;
    }
    f = &snap->files[snap->count];
    if (!(f->name = ci_strdup(name)))
        return -1;
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->size = st->st_size;
    f->mtime = st->st_mtim;
    f->ctime = st->st_ctim;
    if (ts_cmp(&st->st_ctim, &snap->newest) > 0)
        snap->newest = st->st_ctim;
    snap->count++;
    return 0;
}

/* A subdirectory, never through a link, never out of the workspace. */
static int open_subdir(int dirfd, const char *name)
{
    struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                      RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV};
    return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof how);
}

/* Scans directory @fd (consumed), whose path in the workspace is @prefix
 * ("" for the top). */
static void scan_dir(struct scan *sc, int fd, const char *prefix, int depth)
{
    DIR *dir = fdopendir(fd);
    struct dirent *e;

    if (!dir) {
        close(fd);
        sc->snap->incomplete = 1;
        return;
    }
    while (!sc->nomem && (e = readdir(dir))) {
        char path[4096];
        struct stat st;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (++sc->entries > MAX_ENTRIES) {
            sc->snap->incomplete = 1;
            break;
        }
        if (snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "/" : "", e->d_name) >=
                (int)sizeof path ||
            fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            sc->snap->incomplete = 1;
            continue;
        }
        if (S_ISREG(st.st_mode)) {
            if (add_file(sc, path, &st) < 0)
                sc->nomem = 1;
        } else if (S_ISDIR(st.st_mode)) {
            int sub;
            if (depth + 1 >= MAX_DEPTH || (sub = open_subdir(dirfd(dir), e->d_name)) < 0) {
                sc->snap->incomplete = 1;
                continue;
            }
            scan_dir(sc, sub, path, depth + 1);
        }
    }
    closedir(dir);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct ci_file_state *)a)->name,
                  ((const struct ci_file_state *)b)->name);
}

void ci_snapshot_clear(struct ci_snapshot *snap)
{
    for (size_t i = 0; i < snap->count; i++)
        free(snap->files[i].name);
    free(snap->files);
    memset(snap, 0, sizeof *snap);
}

int ci_snapshot_take(int workspace_fd, struct ci_snapshot *snap)
{
    struct scan sc = {.snap = snap};
    int fd;

    ci_snapshot_clear(snap);
    fd = open_subdir(workspace_fd, ".");
    if (fd < 0)
        snap->incomplete = 1;
    else
        scan_dir(&sc, fd, "", 0);
    if (sc.nomem) {
        ci_snapshot_clear(snap);
        return CI_ENOMEM;
    }
    qsort(snap->files, snap->count, sizeof *snap->files, by_name);
    snap->valid = 1;
    return CI_OK;
}

void ci_snapshot_settle(const struct ci_snapshot *snap)
{
    struct timespec now;

    for (int waited = 0; waited < 50; waited++) {
        clock_gettime(CLOCK_REALTIME_COARSE, &now);
        if (ts_cmp(&now, &snap->newest) > 0)
            return;
        usleep(1000);
    }
}

static int same(const struct ci_file_state *a, const struct ci_file_state *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           ts_cmp(&a->mtime, &b->mtime) == 0 && ts_cmp(&a->ctime, &b->ctime) == 0;
}

int ci_snapshot_diff(const struct ci_snapshot *before, const struct ci_snapshot *after,
                     ci_result *r)
{
    size_t i = 0, j = 0;

    if (after->count == 0)
        return CI_OK;
    if (!(r->files = calloc(after->count, sizeof *r->files)))
        return CI_ENOMEM;
    for (j = 0; j < after->count; j++) {
        const struct ci_file_state *f = &after->files[j];
        int cmp = 1;

        while (i < before->count && (cmp = strcmp(before->files[i].name, f->name)) < 0)
            i++;
        if (i < before->count && cmp == 0 && same(&before->files[i], f))
            continue;
        if (!(r->files[r->file_count] = ci_strdup(f->name)))
            return CI_ENOMEM;
        r->file_count++;
    }
    return CI_OK;
}
