/*
 * The session's disk quota, as the worker sees it: the host mounted a
 * tmpfs of the quota's size on the session directory (lib/quota.c), and
 * the worker's root holds it at the same path, through the copy of the
 * host's mount namespace a worker started by exec makes, or through the
 * copy of the mount a zygote's child attaches (ci_mount_session). Either
 * way, the session directory must be that tmpfs: its st_dev is the one
 * the host saw.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "proto.h"
#include "worker.h"

uint32_t ci_check_disk_quota(uint64_t dev)
{
    struct stat st;

    if (!dev)
        return 0;
    if (stat("..", &st) != 0)
        ci_fatal(CI_EXIT_NAMESPACES, "stat the session directory: %s", strerror(errno));
    if ((uint64_t)st.st_dev != dev)
        ci_fatal(CI_EXIT_NAMESPACES, "the session directory is not the host's tmpfs of the "
                 "session's quota (device %llu, not %llu)", (unsigned long long)st.st_dev,
                 (unsigned long long)dev);
    return CI_LAYER_DISK_QUOTA;
}
