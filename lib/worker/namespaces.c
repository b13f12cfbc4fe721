/*
 * Namespaces of the worker's own: user, network, IPC and UTS (the mount
 * namespace is mounts.c's; the PID namespace, and the user namespace
 * that owns it, come with a zygote's clone: see zygote.c and init.c).
 *
 * They are made early in main(), while the worker is single-threaded:
 * unshare(CLONE_NEWUSER) refuses a process with more than one thread, and
 * the watchdog and OpenBLAS start threads. Each one is best effort: where
 * the kernel or a container refuses it, it is skipped and not reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "proto.h"
#include "worker.h"

/* The answers of a kernel, or a container's seccomp profile, that does
 * not give us the namespace; anything else is a failure worth dying for. */
int ci_ns_refused(int err)
{
    return err == EPERM || err == EINVAL || err == ENOSPC || err == EUSERS ||
           err == EACCES || err == ENOSYS;
}

static const struct {
    int flag;
    uint32_t layer;
    const char *name;
} others[] = {
    {CLONE_NEWNET, CI_LAYER_NETNS, "CLONE_NEWNET"}, /* a down loopback and nothing else */
    {CLONE_NEWIPC, CI_LAYER_IPCNS, "CLONE_NEWIPC"}, /* no System V IPC or POSIX queues shared */
    {CLONE_NEWUTS, CI_LAYER_UTSNS, "CLONE_NEWUTS"}, /* a hostname of its own */
};

uint32_t ci_unshare_others(uint32_t have)
{
    uint32_t got = 0;

    for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
        if (have & others[i].layer)
            continue;
        if (unshare(others[i].flag) == 0)
            got |= others[i].layer;
        else if (!ci_ns_refused(errno))
            ci_fatal(CI_EXIT_NAMESPACES, "unshare(%s): %s", others[i].name,
                     strerror(errno));
    }
    return got;
}

/* A failure is tolerated (see ci_unshare_user). */
static void write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);

    if (fd >= 0) {
        ssize_t n = write(fd, text, strlen(text));
        (void)n;
        close(fd);
    }
}

uint32_t ci_unshare_user(void)
{
    /* Read before unsharing: inside, until the maps are written, our
     * ids read as the overflow id. */
    unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();

    if (unshare(CLONE_NEWUSER) != 0) {
        if (ci_ns_refused(errno))
            return 0;
        ci_fatal(CI_EXIT_NAMESPACES, "unshare(CLONE_NEWUSER): %s", strerror(errno));
    }
    ci_map_user(uid, gid);
    return CI_LAYER_USERNS;
}

int ci_unshare_zygote(unsigned uid, unsigned gid)
{
    int probe;

    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
        if (ci_ns_refused(errno))
            return 0;
        ci_fatal(CI_EXIT_NAMESPACES, "zygote: unshare(CLONE_NEWUSER | CLONE_NEWNS): %s",
                 strerror(errno));
    }
    ci_map_user(uid, gid);
    /* A slave copy (mount_namespaces(7)): nothing mounted in it reaches
     * the host; the host's later mounts reach it where they are shared
     * (else the zygote answers EXDEV for a directory it lacks). Where a
     * container's filter refuses mount(2) but not unshare(2), it stays
     * as the kernel made it, which for a namespace owned by a new user
     * namespace is slave already, and the zygote mounts nothing: the
     * spares then find that they cannot make a root of their own either
     * (mounts.c) and go without the mount namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) {
        if (!ci_ns_refused(errno))
            ci_fatal(CI_EXIT_NAMESPACES, "zygote: make / a slave: %s", strerror(errno));
        ci_drop_capabilities();
        return 0;
    }
    /* open_tree(2) is Linux 5.2's; without it, or where a filter refuses
     * it, the spares bind the directory themselves, as before. */
    probe = open_tree(AT_FDCWD, "/", OPEN_TREE_CLOEXEC);
    if (probe < 0) {
        ci_drop_capabilities();
        return 0;
    }
    close(probe);
    ci_keep_capability(CAP_SYS_ADMIN);
    return 1;
}

void ci_map_user(unsigned uid, unsigned gid)
{
    char map[64];

    /*
     * Our own uid and gid, each mapped to itself and nothing else, so
     * files keep their owners as seen inside. An unprivileged process may
     * write exactly these maps (the gid map only after setgroups is
     * denied), but only while dumpable: otherwise root owns its
     * /proc/self files, and leaving uid 0 made a root-started worker
     * non-dumpable. It is dumpable for these three writes only.
     *
     * An LSM may refuse the maps (Ubuntu's restriction of unprivileged
     * user namespaces does). The namespace is ours all the same and its
     * capabilities reach nothing outside; only our ids read as the
     * overflow id inside. So a refused map is not an error.
     */
    if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_NAMESPACES, "prctl(PR_SET_DUMPABLE): %s", strerror(errno));
    write_text("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
    write_text("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
    write_text("/proc/self/gid_map", map);
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_NAMESPACES, "prctl(PR_SET_DUMPABLE): %s", strerror(errno));
}
