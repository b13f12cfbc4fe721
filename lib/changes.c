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
 * with its "racy" index entries, ci_scan_settle() waits out that tick
 * before the next cell may write.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "changes.h"
#include "clock.h"
#include "resolve.h"
#include "result.h"

#define MAX_DEPTH 32
#define MAX_ENTRIES 100000
#define MAX_NAME_BYTES (8u << 20) /* of all the names kept, together */
#define MAX_PATH 4096

struct scan {
    struct ci_scan *scan;
    size_t cap;
    size_t entries;    /* directory entries seen, of any kind */
    size_t name_bytes; /* of the names kept */
    int64_t deadline;  /* ci_now_ms(); the scan stops, incomplete, there */
    int nomem;
    char path[MAX_PATH]; /* the entry's path in the workspace; the stack
                          * of a deep walk holds only offsets into it */
};

static int ts_cmp(const struct timespec *a, const struct timespec *b)
{
    if (a->tv_sec != b->tv_sec)
        return a->tv_sec < b->tv_sec ? -1 : 1;
    return (a->tv_nsec > b->tv_nsec) - (a->tv_nsec < b->tv_nsec);
}

static int add_file(struct scan *sc, const char *name, const struct stat *st)
{
    struct ci_scan *scan = sc->scan;
    struct ci_file_state *f;

    if (scan->count == sc->cap) {
        size_t cap = sc->cap ? 2 * sc->cap : 64;
        struct ci_file_state *grown = realloc(scan->files, cap * sizeof *grown);
        if (!grown)
            return -1;
        scan->files = grown;
        sc->cap = cap;
    }
    f = &scan->files[scan->count];
    if (!(f->name = ci_strdup(name)))
        return -1;
    sc->name_bytes += strlen(name) + 1;
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->size = st->st_size;
    f->mtime = st->st_mtim;
    f->ctime = st->st_ctim;
    if (ts_cmp(&st->st_ctim, &scan->newest) > 0)
        scan->newest = st->st_ctim;
    scan->count++;
    return 0;
}

/* A subdirectory, never through a link, never out of the workspace
 * (resolve.c); @name is one entry that readdir gave, never "." or "..". */
static int open_subdir(int dirfd, const char *name)
{
    return ci_open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, 0);
}

/* Scans directory @fd (consumed), whose path in the workspace is the
 * first @len bytes of sc->path (0 for the top). */
static void scan_dir(struct scan *sc, int fd, size_t len, int depth)
{
    DIR *dir = fdopendir(fd);
    struct dirent *e;

    if (!dir) {
        close(fd);
        sc->scan->incomplete = 1;
        return;
    }
    while (!sc->nomem && (e = readdir(dir))) {
        size_t n = strlen(e->d_name), at = len ? len + 1 : 0;
        struct stat st;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        /* A hostile workspace (a million files, long names) must cost
         * neither the run's deadline nor the host's memory. */
        if (++sc->entries > MAX_ENTRIES || sc->name_bytes > MAX_NAME_BYTES ||
            (sc->entries % 256 == 0 && ci_now_ms() >= sc->deadline)) {
            sc->scan->incomplete = 1;
            break;
        }
        if (at + n >= sizeof sc->path ||
            fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            sc->scan->incomplete = 1;
            continue;
        }
        if (len)
            sc->path[len] = '/';
        memcpy(sc->path + at, e->d_name, n + 1);
        if (S_ISREG(st.st_mode)) {
            if (add_file(sc, sc->path, &st) < 0)
                sc->nomem = 1;
        } else if (S_ISDIR(st.st_mode)) {
            int sub;
            if (depth + 1 >= MAX_DEPTH || (sub = open_subdir(dirfd(dir), e->d_name)) < 0) {
                sc->scan->incomplete = 1;
                continue;
            }
            scan_dir(sc, sub, at + n, depth + 1);
        }
    }
    closedir(dir);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct ci_file_state *)a)->name,
                  ((const struct ci_file_state *)b)->name);
}

void ci_scan_clear(struct ci_scan *scan)
{
    for (size_t i = 0; i < scan->count; i++)
        free(scan->files[i].name);
    free(scan->files);
    memset(scan, 0, sizeof *scan);
}

int ci_scan_take(int workspace_fd, struct ci_scan *scan, int64_t deadline_ms)
{
    struct scan *sc = calloc(1, sizeof *sc);
    int fd;

    ci_scan_clear(scan);
    if (!sc)
        return CI_ENOMEM;
    sc->scan = scan;
    sc->deadline = deadline_ms;
    /* The workspace itself, reopened for reading: no name is resolved. */
    fd = openat(workspace_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        scan->incomplete = 1;
    else
        scan_dir(sc, fd, 0, 0);
    if (sc->nomem) {
        free(sc);
        ci_scan_clear(scan);
        return CI_ENOMEM;
    }
    free(sc);
    /* qsort's array must not be NULL, even empty (C11 7.22.5p1): an empty
     * workspace has none. */
    if (scan->count > 1)
        qsort(scan->files, scan->count, sizeof *scan->files, by_name);
    scan->valid = 1;
    return CI_OK;
}

void ci_scan_settle(const struct ci_scan *scan)
{
    struct timespec now;

    for (int waited = 0; waited < 50; waited++) {
        clock_gettime(CLOCK_REALTIME_COARSE, &now);
        if (ts_cmp(&now, &scan->newest) > 0)
            return;
        usleep(1000);
    }
}

static int same(const struct ci_file_state *a, const struct ci_file_state *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           ts_cmp(&a->mtime, &b->mtime) == 0 && ts_cmp(&a->ctime, &b->ctime) == 0;
}

int ci_scan_diff(const struct ci_scan *before, const struct ci_scan *after,
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
