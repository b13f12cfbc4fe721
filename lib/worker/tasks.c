/*
 * The session's task limit: RLIMIT_NPROC, counted in the worker's own
 * user namespace.
 *
 * The kernel counts a uid's tasks per user namespace (the ucounts of
 * kernel/ucount.c): a fork or a thread is refused with EAGAIN when the
 * count of its (namespace, uid) is over the caller's RLIMIT_NPROC. In a
 * user namespace that only this worker's tasks are in, the count is the
 * session's own, so a thread bomb stops at the limit and no other
 * process of the same uid (the host, other sessions) is refused
 * anything. The tasks are still counted in the namespaces above, under
 * their own limits, so the host's uid carries at most the limit per
 * session.
 *
 * Without a user namespace of its own the count would be of every
 * process of the worker's uid on the machine: a root host's workers all
 * run as 65534, an unprivileged host's as the host's uid. The limit is
 * then not set, and the layer not reported.
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "proto.h"
#include "worker.h"

uint32_t ci_limit_tasks(uint32_t have, uint64_t tasks)
{
    struct rlimit rl = {.rlim_cur = (rlim_t)tasks, .rlim_max = (rlim_t)tasks};

    if (!(have & CI_LAYER_USERNS))
        return 0;
    /* Soft and hard alike; raising the hard limit needs CAP_SYS_RESOURCE
     * in the initial user namespace, which the worker never has. */
    if (setrlimit(RLIMIT_NPROC, &rl) != 0)
        ci_fatal(CI_EXIT_RLIMIT, "setrlimit(RLIMIT_NPROC, %llu): %s",
                 (unsigned long long)tasks, strerror(errno));
    return CI_LAYER_TASK_LIMIT;
}
