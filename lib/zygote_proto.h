/*
 * The zygote's protocol, between the host (lib/zygote.c) and
 * codeinterp-worker --zygote (lib/worker/zygote.c). Shared by both sides
 * and by nothing else; the frames a worker speaks are in proto.h.
 */
#ifndef CI_ZYGOTE_PROTO_H
#define CI_ZYGOTE_PROTO_H

#include <stdint.h>

#include "proto.h"

/*
 * The zygote (codeinterp-worker --zygote, lib/zygote.c and
 * lib/worker/zygote.c): a worker warmed once that forks session workers
 * on request. Its fd 3 is one end of a SOCK_SEQPACKET pair, so every
 * message arrives whole with its descriptors:
 *
 *   zygote -> host  once, when warm: a READY frame (header and payload in
 *                   one message), its layers those of the zygote itself;
 *   host -> zygote  SPAWN: struct ci_spawn_request, then dir_len bytes of
 *                   the session directory's absolute path (no NUL), with
 *                   4 descriptors in SCM_RIGHTS, the new worker's 0..3 (as
 *                   for a worker started by exec), and a fifth exactly
 *                   when quota_dev is not 0: a detached copy of the
 *                   session directory's tmpfs (open_tree(2)), which the
 *                   child attaches instead of the zygote's own copy;
 *   zygote -> host  struct ci_spawn_reply: ASSIGNED with the pid of the
 *                   child about to get the request (any number of times:
 *                   a child that fails to take it is killed and the next
 *                   one ASSIGNED), then STARTED with the pid of the one
 *                   that took it; or FAILED with -errno: -EXDEV when
 *                   the zygote cannot see the session directory (its
 *                   copy of the mount table lacks it), for the host to
 *                   start that worker by exec instead; -ESTALE when the
 *                   directory by that name is not the one the host made.
 *
 * The new worker is the host's child (clone(2) with CLONE_PARENT), checks
 * the limits as the worker's command line would be checked and, as a
 * worker started by exec, says READY or exits on its channel. A pid
 * ASSIGNED but never STARTED is the host's to kill and reap: so no child
 * of the host is left that it never heard of, whenever the zygote dies.
 */
struct ci_spawn_request {
    uint32_t version;         /* CI_PROTO_VERSION */
    uint32_t dpi;
    uint64_t memory;          /* as --memory */
    uint64_t fsize;           /* as --fsize */
    uint64_t output_limit;    /* as --output-limit */
    uint64_t display_limit;   /* as --display-limit */
    uint64_t display_run_limit; /* as --display-run-limit */
    uint64_t cpu;             /* as --cpu */
    uint32_t dir_len;         /* 1 to CI_SPAWN_DIR_MAX */
    uint32_t tasks;           /* as --tasks */
    uint64_t dir_dev, dir_ino; /* the directory's, as the host made it: the
                                * zygote opens it by name and compares */
    uint64_t quota_dev;       /* as --quota-dev: its tmpfs's st_dev, or 0 */
    uint32_t flags;           /* CI_SPAWN_FLAG_* */
    uint32_t reserved;        /* 0 */
};
/* The session rolls back a fatal cell: the child, pid 1 of its PID
 * namespace, stays there as the reaper and the worker is its child
 * (lib/worker/reaper.c). */
#define CI_SPAWN_FLAG_ROLLBACK 1u
#define CI_SPAWN_DIR_MAX 4000u
#define CI_SPAWN_FDS 4

enum ci_spawn_stage { CI_SPAWN_ASSIGNED = 1, CI_SPAWN_STARTED = 2, CI_SPAWN_FAILED = 3 };

struct ci_spawn_reply {
    int32_t pid;    /* a child's, or -errno for FAILED */
    uint32_t stage; /* enum ci_spawn_stage */
};

#endif /* CI_ZYGOTE_PROTO_H */
