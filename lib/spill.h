/*
 * The whole of a cut stream, kept in workspace/.outputs/ (spill.c).
 */
#ifndef CI_SPILL_H
#define CI_SPILL_H

#include <stdint.h>
#include <sys/types.h>

#include "codeinterp.h"

#define CI_SPILL_KEEP 8      /* spill files a session keeps */
#define CI_SPILL_NAME_MAX 32 /* "cell-2147483647.stdout" and its NUL fit */
#define CI_SPILL_MS 100      /* the most time a run spends writing one */
#define CI_SPILL_BUF 65536   /* gathered before a write */
struct ci_spill_kept {       /* a spill file the session keeps */
    char name[CI_SPILL_NAME_MAX];
    dev_t dev;
    ino_t ino;
};

struct ci_spill {
    int fd;   /* the file being written, -1 */
    int dir;  /* .outputs, -1 */
    char tmp[32];
    unsigned long long written;
    unsigned long long room; /* half of what an unprivileged user may write */
    int64_t write_us;        /* spent writing it */
    char *pend;              /* CI_SPILL_BUF bytes gathered for a write */
    size_t pend_len;
    int full; /* it reached the spill limit */
    int slow; /* given up after CI_SPILL_MS */
    int err;  /* errno of what stopped it, 0 */
};
void ci_spill_init(struct ci_spill *sp);
/* Creates workspace/.outputs (if needed) and a new file in it. 0, or -1
 * with sp->err. */
int ci_spill_begin(struct ci_spill *sp, int workspace_fd);
/* Appends what fits under @cap bytes; a failed write gives up the file. */
void ci_spill_write(struct ci_spill *sp, const char *data, size_t n, unsigned long long cap);
/* Closes the file and renames it to .outputs/cell-@count.stdout (or
 * .stderr), whose workspace-relative name goes to @name; the session,
 * unless NULL, keeps it among its last CI_SPILL_KEEP. 0, or -1 (nothing
 * kept, sp->err says why). */
int ci_spill_end(struct ci_spill *sp, ci_session *s, int count, int stream, char *name,
                 size_t size);

#endif /* CI_SPILL_H */
