/*
 * Never root, and no capabilities: the worker's credentials.
 *
 * A worker started by a root host leaves root for CI_WORKER_UID and
 * CI_WORKER_GID before it runs any Python; every worker then empties its
 * capability sets, once right away and again inside the user namespace it
 * may create (which hands it a full set there). All of this runs while the
 * worker is single-threaded, before Python starts.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto.h"
#include "worker.h"

/*
 * Locked so that nothing the worker does later can give root its powers
 * back: uid 0 gets no capabilities from execve (NOROOT), leaving uid 0
 * always clears the capability sets (NO_SETUID_FIXUP locked off, KEEP_CAPS
 * locked off), and no ambient capability can be raised.
 */
#define SECURE_BITS                                                         \
    (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP_LOCKED |  \
     SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |                 \
     SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/*
 * Both need CAP_SETPCAP, which a root worker has, and so does a worker
 * in its fresh user namespace (where the kernel also reset the securebits
 * and refilled the bounding set). Without it each call fails with EPERM
 * and is skipped: an unprivileged process cannot use its bounding set
 * anyway, with no_new_privs set and execve refused.
 */
static void lock_and_empty_bounding_set(int except)
{
    if (prctl(PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0) != 0 && errno != EPERM)
        ci_fatal(CI_EXIT_PRIVILEGES, "prctl(PR_SET_SECUREBITS): %s", strerror(errno));
    /* PR_CAPBSET_READ fails (EINVAL) past the kernel's last capability. */
    for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
        if (cap != except && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EPERM)
            ci_fatal(CI_EXIT_PRIVILEGES, "prctl(PR_CAPBSET_DROP, %d): %s", cap,
                     strerror(errno));
}

void ci_leave_root(void)
{
    char cwd[PATH_MAX] = "";
    uid_t r, e, s;

    if (getresuid(&r, &e, &s) != 0)
        ci_fatal(CI_EXIT_PRIVILEGES, "getresuid: %s", strerror(errno));
    if (r != 0 && e != 0 && s != 0)
        return;
    /* Before the switch: both need CAP_SETPCAP, which the switch takes. */
    lock_and_empty_bounding_set(-1);
    /* Groups first, while CAP_SETGID is still ours. Any failure is fatal:
     * a half-done switch would run cells as root. */
    if (setgroups(0, NULL) != 0)
        ci_fatal(CI_EXIT_PRIVILEGES, "setgroups: %s", strerror(errno));
    if (setresgid(CI_WORKER_GID, CI_WORKER_GID, CI_WORKER_GID) != 0)
        ci_fatal(CI_EXIT_PRIVILEGES, "setresgid(%u): %s", CI_WORKER_GID, strerror(errno));
    if (setresuid(CI_WORKER_UID, CI_WORKER_UID, CI_WORKER_UID) != 0)
        ci_fatal(CI_EXIT_PRIVILEGES, "setresuid(%u): %s", CI_WORKER_UID, strerror(errno));
    /* The host gave the session directory to this uid, but HOME, TMPDIR
     * and MPLCONFIGDIR are absolute paths through the directories above
     * it: say so now rather than fail obscurely in matplotlib. */
    if (!getcwd(cwd, sizeof cwd) || access(cwd, R_OK | W_OK | X_OK) != 0)
        ci_fatal_unreachable(cwd, errno);
}

_Noreturn void ci_fatal_unreachable(const char *path, int err)
{
    ci_fatal(CI_EXIT_PRIVILEGES, "uid %u cannot reach its workspace %s: %s; every "
             "directory above the session directory must be searchable by that user",
             (unsigned)getuid(), path, strerror(err));
}

/* All but @keep (-1: none) out of every set. */
static void keep_only(int keep)
{
    struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3] = {{0}};

    lock_and_empty_bounding_set(keep);
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_PRIVILEGES, "prctl(PR_CAP_AMBIENT_CLEAR_ALL): %s", strerror(errno));
    if (keep >= 0)
        caps[keep / 32].effective = caps[keep / 32].permitted = 1u << (keep % 32);
    /* Lowering capabilities is always allowed, so a failure is a bug. */
    if (syscall(SYS_capset, &head, caps) != 0)
        ci_fatal(CI_EXIT_PRIVILEGES, "capset: %s", strerror(errno));
}

void ci_drop_capabilities(void)
{
    keep_only(-1);
}

void ci_keep_capability(int cap)
{
    keep_only(cap);
}

uint32_t ci_check_unprivileged(void)
{
    struct __user_cap_header_struct head = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
    uid_t r, e, s;

    if (getresuid(&r, &e, &s) != 0 || r == 0 || e == 0 || s == 0)
        return 0;
    if (syscall(SYS_capget, &head, caps) != 0)
        return 0;
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
        if (caps[i].effective || caps[i].permitted || caps[i].inheritable)
            return 0;
    for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) != 0)
            return 0;
    return CI_LAYER_UNPRIVILEGED;
}
