/*
 * Writes to stdout a seccomp BPF program for bwrap's --seccomp FD that
 * fails, with EPERM, the system calls of the groups named on the command
 * line, and allows every other call, as a container's profile does
 * (Docker's default refuses all of them to a process without
 * CAP_SYS_ADMIN). tools/bwrap-check builds it and feeds its output to
 * bwrap, to run the tests where the kernel has a layer but the
 * container refuses it.
 *
 *   bwrap-seccomp GROUP...      GROUP: namespaces, landlock or mount
 *
 *   namespaces  unshare(2), setns(2), and clone(2) with any CLONE_NEW*
 *               flag; clone3(2) fails with ENOSYS, as in Docker's
 *               profile, since a filter cannot read its flags, and the C
 *               library then falls back to clone(2)
 *   landlock    landlock_create_ruleset, landlock_add_rule and
 *               landlock_restrict_self
 *   mount       mount(2), umount2(2), pivot_root(2) and the new mount API
 *               (open_tree, move_mount, fsopen, fsconfig, fsmount,
 *               fspick, mount_setattr)
 *
 * Built with libseccomp: cc -o bwrap-seccomp bwrap-seccomp.c -lseccomp
 */
#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const unsigned long clone_new[] = {CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
                                          CLONE_NEWIPC, CLONE_NEWUTS,  CLONE_NEWCGROUP, CLONE_NEWTIME};

static const char *const landlock_calls[] = {"landlock_create_ruleset", "landlock_add_rule",
                                             "landlock_restrict_self", NULL};
static const char *const mount_calls[] = {"mount",    "umount2", "pivot_root", "open_tree",
                                          "move_mount", "fsopen", "fsconfig",  "fsmount",
                                          "fspick",   "mount_setattr", NULL};

static int fail_with(scmp_filter_ctx ctx, int err, const char *const *names)
{
    for (; *names; names++) {
        int nr = seccomp_syscall_resolve_name(*names);
        if (nr == __NR_SCMP_ERROR) {
            fprintf(stderr, "bwrap-seccomp: libseccomp does not know %s\n", *names);
            return -1;
        }
        if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), nr, 0) != 0)
            return -1;
    }
    return 0;
}

static int namespaces(scmp_filter_ctx ctx)
{
    static const char *const calls[] = {"unshare", "setns", NULL};
    static const char *const clone3[] = {"clone3", NULL};
    if (fail_with(ctx, EPERM, calls) != 0 || fail_with(ctx, ENOSYS, clone3) != 0)
        return -1;
    /* One rule a flag: rules for one call are or'ed, and a masked
     * comparison tests all of its mask's bits at once. */
    for (size_t i = 0; i < sizeof clone_new / sizeof *clone_new; i++)
        if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, clone_new[i], clone_new[i])) != 0)
            return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || isatty(STDOUT_FILENO)) {
        fprintf(stderr, "usage: bwrap-seccomp GROUP... > filter.bpf "
                        "(GROUP: namespaces, landlock, mount)\n");
        return 2;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return 1;
    for (int i = 1; i < argc; i++) {
        int rc;
        if (strcmp(argv[i], "namespaces") == 0)
            rc = namespaces(ctx);
        else if (strcmp(argv[i], "landlock") == 0)
            rc = fail_with(ctx, EPERM, landlock_calls);
        else if (strcmp(argv[i], "mount") == 0)
            rc = fail_with(ctx, EPERM, mount_calls);
        else {
            fprintf(stderr, "bwrap-seccomp: unknown group %s\n", argv[i]);
            rc = -1;
        }
        if (rc != 0) {
            seccomp_release(ctx);
            return 1;
        }
    }
    int rc = seccomp_export_bpf(ctx, STDOUT_FILENO);
    seccomp_release(ctx);
    return rc == 0 ? 0 : 1;
}
