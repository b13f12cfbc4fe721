/*
 * Draining the worker's stdout and stderr into capped buffers
 * (output.c).
 */
#ifndef CI_OUTPUT_H
#define CI_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "codeinterp.h"
#include "result.h"
#include "spill.h"

struct ci_stream {
    int fd;                          /* -1 when closed */
    struct ci_buf *buf;              /* NULL: read and discard */
    unsigned long long total, lines; /* bytes and line breaks read */
    size_t given;                    /* bytes of buf passed to the callback */
    int64_t partial_since;           /* when a partial line began to wait, 0 */
    int cut;                         /* past the cap: buf is the head */
    char *tail;                      /* once cut: a ring of the last bytes */
    size_t tail_len, tail_end;
    struct ci_spill spill;
};
struct ci_drain {
    struct ci_stream s[2]; /* stdout, stderr */
    size_t cap;
    int *truncated;   /* gets CI_TRUNCATED_STDOUT/STDERR; may be NULL */
    ci_output_fn fn;  /* is given what buf keeps, in whole lines; may be NULL */
    void *payload;
    int spill_dir;    /* the workspace; -1: a cut stream is not kept whole */
    unsigned long long spill_cap;
    ci_session *session; /* keeps the spill files; may be NULL */
    int count;           /* the cell's number, in the spill files' names */
};
/* No callback and no spill file until the caller sets them. */
void ci_drain_init(struct ci_drain *d, int out, int err, struct ci_buf *out_buf,
                   struct ci_buf *err_buf, size_t cap, int *truncated);
/* Reads whatever is available on either pipe; never blocks. 0, or -1 when
 * memory ran out. */
int ci_drain_pipes(struct ci_drain *d);
/* Reads one pipe, at most 1 MiB; 0 when done for now, 1 on EOF (the fd
 * set to -1), -1 on ENOMEM. */
int ci_drain_one(struct ci_drain *d, int i);
/* When (ci_now_ms) a partial line is due to go to the callback, or
 * INT64_MAX; ci_drain_give_partial() passes on those due at @now. */
int64_t ci_drain_partial_due(const struct ci_drain *d);
void ci_drain_give_partial(struct ci_drain *d, int64_t now);
/* The run is over: passes on what waits, renames the spill files and
 * joins each cut stream's head, marker and tail; @r (may be NULL) gets
 * the spill files' names and where the markers are. Must be called once
 * for every drain that has buffers. */
void ci_drain_finish(struct ci_drain *d, ci_result *r);

#endif /* CI_OUTPUT_H */
