/*
 * The worker's lockdown, in the order it runs. The seccomp filter comes
 * last because it forbids the calls the other steps make.
 */
#include <errno.h>
#include <linux/landlock.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto.h"
#include "worker.h"

void ci_tie_to_parent(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_PDEATHSIG, "prctl(PR_SET_PDEATHSIG): %s",
                 strerror(errno));
    /* Checked after setting the signal: a parent that died before it was
     * set has already left us with another parent. */
    if (getppid() != parent)
        ci_fatal(CI_EXIT_PARENT, "parent is %d, not %d", (int)getppid(),
                 (int)parent);
}

static void limit(int resource, const char *name, rlim_t value)
{
    struct rlimit rl = {.rlim_cur = value, .rlim_max = value};

    if (setrlimit(resource, &rl) != 0)
        ci_fatal(CI_EXIT_RLIMIT, "setrlimit(%s, %llu): %s", name,
                 (unsigned long long)value, strerror(errno));
}

/*
 * Landlock's ruleset attribute as of ABI 6 (Documentation/userspace-api/
 * landlock.rst); Debian 12's <linux/landlock.h> predates its last two
 * fields, so the layout and the flags are spelled out here.
 */
struct landlock_attr_v6 {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};
#define LL_ACCESS_FS_EXECUTE (1ULL << 0)
#define LL_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LL_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/*
 * A Landlock domain of our own. Being inside any domain is what matters
 * most here: the kernel then refuses ptrace-mode access to processes
 * outside it, so a cell cannot open the host's /proc/PID/mem even with the
 * host's uid. The domain also forbids execution of files, all TCP bind
 * and connect (ABI 4+), and signals or abstract unix sockets that leave it
 * (ABI 6+). Read and write rules for paths come with the full filesystem
 * policy. Best effort: a kernel without Landlock still has the seccomp
 * filter and the rlimits.
 */
static int landlock_confine(void)
{
    struct landlock_attr_v6 attr = {.handled_access_fs = LL_ACCESS_FS_EXECUTE};
    size_t size = offsetof(struct landlock_attr_v6, handled_access_net);
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    int fd;

    if (abi < 1)
        return 0;
    if (abi >= 4) {
        attr.handled_access_net = LL_ACCESS_NET_BIND_TCP | LL_ACCESS_NET_CONNECT_TCP;
        size = offsetof(struct landlock_attr_v6, scoped);
    }
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (fd < 0)
        ci_fatal(CI_EXIT_LANDLOCK, "landlock_create_ruleset: %s", strerror(errno));
    if (syscall(SYS_landlock_restrict_self, fd, 0) != 0)
        ci_fatal(CI_EXIT_LANDLOCK, "landlock_restrict_self: %s", strerror(errno));
    close(fd);
    return 1;
}

uint32_t ci_lockdown(pid_t parent, const struct ci_limits *limits)
{
    uint32_t layers = CI_LAYER_RLIMITS | CI_LAYER_NO_NEW_PRIVS | CI_LAYER_SECCOMP;

    /* Our own session: no controlling terminal, and out of the host's
     * process group and its job-control signals. */
    if (setsid() < 0)
        ci_fatal(CI_EXIT_SETSID, "setsid: %s", strerror(errno));
    /* Again, now that the slow warm-up is over: the host may have gone
     * while we imported. */
    ci_tie_to_parent(parent);
    /* No core dumps, and no ptrace or /proc/PID/mem from same-uid
     * processes. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_DUMPABLE, "prctl(PR_SET_DUMPABLE): %s",
                 strerror(errno));
    /* Soft and hard alike, so a cell cannot raise them again. */
    limit(RLIMIT_AS, "RLIMIT_AS", (rlim_t)limits->memory);
    limit(RLIMIT_CORE, "RLIMIT_CORE", 0);
    limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", (rlim_t)limits->fsize);
    limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", 256);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_NO_NEW_PRIVS, "prctl(PR_SET_NO_NEW_PRIVS): %s",
                 strerror(errno));
    if (landlock_confine())
        layers |= CI_LAYER_LANDLOCK;
    ci_policy_load();
    return layers; /* every other step exits the worker if it fails */
}
