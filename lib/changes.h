/*
 * Which workspace files a run created or modified (changes.c): scans
 * of the workspace's regular files and their difference.
 */
#ifndef CI_CHANGES_H
#define CI_CHANGES_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "codeinterp.h"

/* A regular file of the workspace as stat(2) saw it (changes.c). */
struct ci_file_state {
    char *name; /* relative to the workspace */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};

/* The workspace's regular files at one moment, sorted by name. */
struct ci_scan {
    struct ci_file_state *files;
    size_t count;
    int valid;      /* 0: none taken, or the workspace changed since */
    int incomplete; /* the scan stopped at a limit or an unreadable directory */
    struct timespec newest; /* the latest ctime seen */
};

/* Scans the workspace into @scan (replacing what it held), stopping at
 * @deadline_ms (ci_now_ms), 100000 entries or 8 MiB of names. CI_OK or
 * CI_ENOMEM; an unreadable part or a limit only makes it incomplete. */
int ci_scan_take(int workspace_fd, struct ci_scan *scan, int64_t deadline_ms);
void ci_scan_clear(struct ci_scan *scan);
/* Waits, at most 50 ms, until a file written now would get a change time
 * later than any in @scan, so a rewrite of the same size is still seen. */
void ci_scan_settle(const struct ci_scan *scan);
/* Fills r->files with the regular files of @after that are not in
 * @before or differ from it. CI_OK or CI_ENOMEM. */
int ci_scan_diff(const struct ci_scan *before, const struct ci_scan *after,
                 ci_result *r);

#endif /* CI_CHANGES_H */
