/*
 * The seccomp filter (lib/worker/seccomp.c) as tested code, the way
 * bubblewrap's tests/try-syscall.c and Firecracker's seccomp tests do it:
 * every rule of the table is called from a cell, through ctypes, with
 * arguments it allows and, for the rules that look at arguments, with
 * each argument perturbed.
 *
 * Arguments are chosen so that a call the filter lets through can harm
 * nothing and gets an answer from the kernel that is not EPERM: a bad
 * descriptor (-1, EBADF), a NULL pointer (EFAULT), a length or flag the
 * kernel rejects (EINVAL), a signal number past the last (EINVAL). So
 * EPERM can only be the filter's, and anything else means the call
 * reached the kernel.
 *
 * The expected lists below are written out by hand on purpose, not parsed
 * from the rule table: a change to the filter must come with a change
 * here, made by someone who decided the new behaviour is meant.
 *
 * That every thread of a live worker has "Seccomp:\t2" and "NoNewPrivs:\t1"
 * is checked from the host in test_sandbox.c
 * (test_every_thread_has_seccomp_and_no_new_privs and
 * test_threads_started_by_a_cell_are_locked_too); not repeated here.
 */
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "helpers.h"

#ifndef __x86_64__
#error "the filter and this test are written for x86_64"
#endif

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, NULL);
}

/* What a probe must get. */
enum want {
    KERNEL, /* reached the kernel: success or any error but EPERM and ENOSYS */
    EINTR_, /* the kernel's EINTR (restart_syscall with nothing to restart) */
    EPERM_, /* the filter's EPERM */
    ENOSYS_ /* the filter's ENOSYS (clone3 only) */
};

struct probe {
    const char *name; /* the call, and what about it is probed */
    long nr;
    const char *args; /* Python expressions, after the number */
    enum want want;
};

#define P(sys, what, args, want) {#sys " " what, SYS_##sys, args, want}

/* Constants the probes name, taken from the C headers seccomp.c uses, so
 * both sides agree. */
#define C(x) {#x, (long long)(x)}
static const struct {
    const char *name;
    long long value;
} constants[] = {
    C(F_DUPFD), C(F_DUPFD_CLOEXEC), C(F_GETFD), C(F_SETFD), C(F_GETFL), C(F_SETFL),
    C(F_GETLK), C(F_SETLK), C(F_SETLKW), C(F_OFD_GETLK), C(F_OFD_SETLK), C(F_OFD_SETLKW),
    C(F_GETPIPE_SZ), C(F_SETPIPE_SZ), C(F_SETOWN), C(F_GETOWN), C(F_SETOWN_EX),
    C(F_SETSIG), C(F_SETLEASE), C(F_NOTIFY),
    C(TCGETS), C(TIOCGWINSZ), C(FIONBIO), C(FIOCLEX), C(FIONCLEX), C(FIONREAD),
    C(TIOCSTI), C(FIOASYNC),
    C(PR_SET_PDEATHSIG), C(PR_GET_DUMPABLE), C(PR_SET_DUMPABLE), C(PR_SET_NAME),
    C(PR_GET_NAME), C(PR_SET_SECCOMP), C(PR_SET_NO_NEW_PRIVS), C(PR_CAP_AMBIENT),
    C(FALLOC_FL_KEEP_SIZE), C(FALLOC_FL_PUNCH_HOLE), C(FALLOC_FL_ZERO_RANGE),
    C(FALLOC_FL_INSERT_RANGE),
    C(RLIMIT_NOFILE), C(AF_UNIX), C(AF_INET), C(AF_NETLINK), C(SIGINT), C(SIGCHLD), C(SIGSYS),
    C(CLONE_VM), C(CLONE_THREAD), C(CLONE_NEWNS), C(CLONE_NEWCGROUP), C(CLONE_NEWUTS),
    C(CLONE_NEWIPC), C(CLONE_NEWUSER), C(CLONE_NEWPID), C(CLONE_NEWNET),
    /* The flags glibc's pthread_create passes to clone. */
    {"THREAD", CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM},
    /* CLONE_PIDFD with CLONE_PARENT_SETTID: the kernel refuses the pair
     * (EINVAL) before it creates anything. */
    {"BAD_PAIR", CLONE_PIDFD | CLONE_PARENT_SETTID},
};
#undef C

/*
 * Python run before every batch: the host's pid as HOST_PID, the socket
 * module the probes use, and the cell seccomp_prelude: p(nr, *args) makes
 * the raw call and gives "ok" or the errno's name, and a few values the
 * probes use; then the constants above. Malloc'ed.
 */
static char *prelude(void)
{
    char *cell = h_cell("seccomp_prelude");
    char *code = h_fmt("HOST_PID = %d\nimport socket\n%s\n", (int)getpid(), cell);
    free(cell);
    for (size_t i = 0; i < sizeof constants / sizeof *constants; i++) {
        char *more = h_fmt("%s%s = %lld\n", code, constants[i].name, constants[i].value);
        free(code);
        code = more;
    }
    return code;
}

static const char *want_name(enum want w)
{
    return w == KERNEL ? "the kernel's answer" : w == EINTR_ ? "EINTR" : w == EPERM_ ? "EPERM" : "ENOSYS";
}

/* 1 if @got (an errno name or "ok") is what @w asks for. */
static int as_wanted(const char *got, enum want w)
{
    if (w == EINTR_)
        return strcmp(got, "EINTR") == 0;
    if (w == EPERM_)
        return strcmp(got, "EPERM") == 0;
    if (w == ENOSYS_)
        return strcmp(got, "ENOSYS") == 0;
    return strcmp(got, "EPERM") != 0 && strcmp(got, "ENOSYS") != 0 &&
           strncmp(got, "python:", 7) != 0;
}

/* Runs all @n probes in one cell, compares each answer with the table and
 * fails listing every mismatch. */
static void run_probes(const struct probe *probes, size_t n)
{
    char *pre = prelude();
    size_t cap = strlen(pre) + 64 + n * 160, len;
    char *code = malloc(cap);
    assert_non_null(code);
    len = (size_t)snprintf(code, cap, "%sres = []\n", pre);
    for (size_t i = 0; i < n; i++) {
        const char *call = probes[i].nr == SYS_restart_syscall ? "p_reset" : "p";
        len += (size_t)snprintf(code + len, cap - len, "res.append(%s(%ld%s%s))\n", call,
                                probes[i].nr, *probes[i].args ? ", " : "", probes[i].args);
        assert_true(len < cap);
    }
    snprintf(code + len, cap - len, "','.join(res)");
    ci_result *r = h_run_status(S, code, CI_STATUS_OK);
    const char *v = ci_result_value(r);
    assert_non_null(v);
    /* The value is the repr of a str of comma-separated names. */
    char *answers = strndup(v + 1, strlen(v) - 2), *save = NULL;
    char *tok = strtok_r(answers, ",", &save);
    int bad = 0;
    for (size_t i = 0; i < n; i++, tok = strtok_r(NULL, ",", &save)) {
        if (!tok)
            fail_msg("only %zu answers for %zu probes: %s", i, n, v);
        if (!as_wanted(tok, probes[i].want)) {
            print_error("  %-40s got %-12s expected %s\n", probes[i].name, tok,
                        want_name(probes[i].want));
            bad++;
        }
    }
    assert_null(tok);
    free(answers);
    ci_result_free(r);
    free(code);
    free(pre);
    if (bad)
        fail_msg("%d of %zu probes got what the filter does not say", bad, n);
}

/* --------------------------------------------------- allowed outright */

/*
 * Every ALLOW() rule, with arguments the kernel refuses or that change
 * nothing. Not called raw, as no argument makes them harmless, but run by
 * every cell that starts and ends a thread or takes a signal: exit and
 * exit_group (see test_thread_and_process_exit_work), rt_sigreturn.
 */
static const struct probe allowed[] = {
    /* memory */
    P(brk, "query", "0", KERNEL),
    P(mmap, "length 0", "0, 0, 0, 0x22, -1, 0", KERNEL),
    P(munmap, "length 0", "0, 0", KERNEL),
    P(mprotect, "unaligned", "1, 4096, 0", KERNEL),
    P(mremap, "unaligned", "1, 4096, 4096, 0", KERNEL),
    P(madvise, "unaligned", "1, 4096, 0", KERNEL),
    P(msync, "unaligned", "1, 4096, 0", KERNEL),
    /* descriptors */
    P(read, "fd -1", "-1, 0, 0", KERNEL),
    P(write, "fd -1", "-1, 0, 0", KERNEL),
    P(pread64, "fd -1", "-1, 0, 0, 0", KERNEL),
    P(pwrite64, "fd -1", "-1, 0, 0, 0", KERNEL),
    P(readv, "fd -1", "-1, 0, 0", KERNEL),
    P(writev, "fd -1", "-1, 0, 0", KERNEL),
    P(preadv, "fd -1", "-1, 0, 0, 0, 0", KERNEL),
    P(pwritev, "fd -1", "-1, 0, 0, 0, 0", KERNEL),
    P(preadv2, "fd -1", "-1, 0, 0, 0, 0, 0", KERNEL),
    P(pwritev2, "fd -1", "-1, 0, 0, 0, 0, 0", KERNEL),
    P(lseek, "fd -1", "-1, 0, 0", KERNEL),
    P(close, "fd -1", "-1", KERNEL),
    P(close_range, "first > last", "5, 4, 0", KERNEL),
    P(dup, "fd -1", "-1", KERNEL),
    P(dup2, "fd -1", "-1, 1000", KERNEL),
    P(dup3, "fd -1", "-1, 1000, 0", KERNEL),
    P(fstat, "fd -1", "-1, 0", KERNEL),
    P(fstatfs, "fd -1", "-1, 0", KERNEL),
    P(ftruncate, "fd -1", "-1, 0", KERNEL),
    P(fsync, "fd -1", "-1", KERNEL),
    P(fdatasync, "fd -1", "-1", KERNEL),
    P(fadvise64, "fd -1", "-1, 0, 0, 0", KERNEL),
    P(flock, "fd -1", "-1, 0", KERNEL),
    P(getdents64, "fd -1", "-1, 0, 0", KERNEL),
    P(sendfile, "fd -1", "-1, -1, 0, 0", KERNEL),
    P(copy_file_range, "fd -1", "-1, 0, -1, 0, 1, 0", KERNEL),
    P(pipe, "NULL", "0", KERNEL),
    P(pipe2, "NULL", "0, 0", KERNEL),
    P(eventfd2, "bad flags", "0, 0x7fffffff", KERNEL),
    /* paths: NULL names, EFAULT */
    P(stat, "NULL", "0, 0", KERNEL),
    P(lstat, "NULL", "0, 0", KERNEL),
    P(newfstatat, "NULL", "-100, 0, 0, 0", KERNEL),
    P(statx, "NULL", "-100, 0, 0, 0, 0", KERNEL),
    P(statfs, "NULL", "0, 0", KERNEL),
    P(access, "NULL", "0, 0", KERNEL),
    P(faccessat, "NULL", "-100, 0, 0", KERNEL),
    P(faccessat2, "NULL", "-100, 0, 0, 0", KERNEL),
    P(readlink, "NULL", "0, 0, 0", KERNEL),
    P(readlinkat, "NULL", "-100, 0, 0, 0", KERNEL),
    P(getcwd, "size 0", "0, 0", KERNEL),
    P(chdir, "NULL", "0", KERNEL),
    P(fchdir, "fd -1", "-1", KERNEL),
    P(rmdir, "NULL", "0", KERNEL),
    P(unlink, "NULL", "0", KERNEL),
    P(unlinkat, "NULL", "-100, 0, 0", KERNEL),
    P(rename, "NULL", "0, 0", KERNEL),
    P(renameat, "NULL", "-100, 0, -100, 0", KERNEL),
    P(renameat2, "NULL", "-100, 0, -100, 0, 0", KERNEL),
    P(renameat2, "RENAME_NOREPLACE | RENAME_EXCHANGE", "-100, 0, -100, 0, 3", KERNEL),
    P(renameat2, "RENAME_NOREPLACE | 1 << 32", "-100, 0, -100, 0, HIGH | 1", KERNEL),
    P(renameat2, "RENAME_WHITEOUT", "-100, 0, -100, 0, 4", EPERM_),
    P(renameat2, "RENAME_WHITEOUT | 1 << 32", "-100, 0, -100, 0, HIGH | 4", EPERM_),
    P(link, "NULL", "0, 0", KERNEL),
    P(linkat, "NULL", "-100, 0, -100, 0, 0", KERNEL),
    P(symlink, "NULL", "0, 0", KERNEL),
    P(symlinkat, "NULL", "0, -100, 0", KERNEL),
    P(utimensat, "fd -1", "-1, 0, 0, 0", KERNEL),
    P(truncate, "NULL", "0, 0", KERNEL),
    P(listxattr, "NULL", "0, 0, 0", KERNEL),
    P(llistxattr, "NULL", "0, 0, 0", KERNEL),
    P(flistxattr, "fd -1", "-1, 0, 0", KERNEL),
    P(getxattr, "NULL", "0, 0, 0, 0", KERNEL),
    P(lgetxattr, "NULL", "0, 0, 0, 0", KERNEL),
    P(fgetxattr, "fd -1", "-1, 0, 0, 0", KERNEL),
    /* threads and the process */
    P(futex, "NULL", "0, 0, 0, 0, 0, 0", KERNEL),
    P(set_robust_list, "bad length", "0, 0", KERNEL),
    P(rseq, "bad length", "0, 0, 0, 0", KERNEL),
    /* The main thread's clear_child_tid, which nothing waits on. */
    P(set_tid_address, "NULL", "0", KERNEL),
    P(sched_yield, "", "", KERNEL),
    P(sched_getaffinity, "size 0", "0, 0, 0", KERNEL),
    P(getcpu, "NULL", "0, 0, 0", KERNEL),
    P(getpid, "", "", KERNEL),
    P(gettid, "", "", KERNEL),
    P(getppid, "", "", KERNEL),
    P(getpgrp, "", "", KERNEL),
    P(getpgid, "own, pid 0", "0", KERNEL),
    P(getpgid, "own pid by number", "me", EPERM_),
    P(getpgid, "the host", "parent", EPERM_),
    P(getpgid, "pid 0 | 1 << 32", "HIGH", EPERM_),
    P(getsid, "own, pid 0", "0", KERNEL),
    P(getsid, "own pid by number", "me", EPERM_),
    P(getsid, "the host", "parent", EPERM_),
    P(getsid, "pid 0 | 1 << 32", "HIGH", EPERM_),
    P(getuid, "", "", KERNEL),
    P(geteuid, "", "", KERNEL),
    P(getgid, "", "", KERNEL),
    P(getegid, "", "", KERNEL),
    P(getresuid, "NULL", "0, 0, 0", KERNEL),
    P(getresgid, "NULL", "0, 0, 0", KERNEL),
    P(getgroups, "count", "0, 0", KERNEL),
    P(uname, "NULL", "0", KERNEL),
    P(getrusage, "NULL", "0, 0", KERNEL),
    P(times, "NULL", "0", KERNEL),
    P(getrlimit, "NULL", "0, 0", KERNEL),
    P(getrandom, "0 bytes", "0, 0, 0", KERNEL),
    /* signals */
    P(rt_sigprocmask, "bad size", "0, 0, 0, 7", KERNEL),
    P(rt_sigpending, "bad size", "0, 7", KERNEL),
    P(rt_sigsuspend, "bad size", "0, 7", KERNEL),
    P(rt_sigtimedwait, "bad size", "0, 0, 0, 7", KERNEL),
    P(sigaltstack, "query", "0, 0", KERNEL),
    P(restart_syscall, "nothing to restart (p_reset)", "", EINTR_),
    P(getitimer, "bad timer", "99, 0", KERNEL),
    P(setitimer, "bad timer", "99, 0, 0", KERNEL),
    P(alarm, "none pending", "0", KERNEL),
    /* time */
    P(clock_gettime, "bad clock", "99, 0", KERNEL),
    P(clock_getres, "bad clock", "99, 0", KERNEL),
    P(gettimeofday, "NULL", "0, 0", KERNEL),
    P(time, "NULL", "0", KERNEL),
    P(nanosleep, "NULL", "0, 0", KERNEL),
    P(clock_nanosleep, "bad clock", "99, 0, 0, 0", KERNEL),
    /* waiting */
    P(poll, "nothing, no wait", "0, 0, 0", KERNEL),
    P(ppoll, "bad timeout", "0, 0, 1, 0, 8", KERNEL),
    P(select, "n < 0", "-1, 0, 0, 0, 0", KERNEL),
    P(pselect6, "n < 0", "-1, 0, 0, 0, 0, 0", KERNEL),
    P(epoll_create1, "bad flags", "-1", KERNEL),
    P(epoll_ctl, "fd -1", "-1, 1, -1, 0", KERNEL),
    P(epoll_wait, "fd -1", "-1, 0, 1, 0", KERNEL),
    P(epoll_pwait, "fd -1", "-1, 0, 1, 0, 0, 8", KERNEL),
    /* sockets, on a bad descriptor */
    P(sendto, "fd -1", "-1, 0, 0, 0, 0, 0", KERNEL),
    P(recvfrom, "fd -1", "-1, 0, 0, 0, 0, 0", KERNEL),
    P(sendmsg, "fd -1", "-1, 0, 0", KERNEL),
    P(recvmsg, "fd -1", "-1, 0, 0", KERNEL),
    P(shutdown, "fd -1", "-1, 0", KERNEL),
    P(getsockname, "fd -1", "-1, 0, 0", KERNEL),
    P(getpeername, "fd -1", "-1, 0, 0", KERNEL),
    P(getsockopt, "fd -1", "-1, 0, 0, 0, 0", KERNEL),
    P(setsockopt, "fd -1", "-1, 0, 0, 0, 0", KERNEL),
    /* A pidfd of the host through descriptor 3: SO_PEERPIDFD (77) and
     * SO_PASSPIDFD (76) at SOL_SOCKET (1); their neighbours reach the
     * kernel (EBADF for fd -1). */
    P(getsockopt, "SO_PEERPIDFD of the channel", "3, 1, 77, 0, 0", EPERM_),
    P(getsockopt, "SO_PEERPIDFD | 1 << 32", "3, 1, HIGH | 77, 0, 0", EPERM_),
    P(getsockopt, "option 78", "-1, 1, 78, 0, 0", KERNEL),
    P(setsockopt, "SO_PASSPIDFD on the channel", "3, 1, 76, 0, 0", EPERM_),
    P(setsockopt, "option 75", "-1, 1, 75, 0, 0", KERNEL),
};

static void test_allowed_calls_reach_the_kernel(void **state)
{
    run_probes(allowed, sizeof allowed / sizeof *allowed);
}

/* ------------------------------------------- rules with a condition */

/* Each argument rule with the arguments it allows, then perturbed. */
static const struct probe conditional[] = {
    /* fcntl: the listed commands on fd -1 get EBADF; others the filter's
     * EPERM, whatever the descriptor. */
    P(fcntl, "F_DUPFD", "-1, F_DUPFD, 0", KERNEL),
    P(fcntl, "F_DUPFD_CLOEXEC", "-1, F_DUPFD_CLOEXEC, 0", KERNEL),
    P(fcntl, "F_GETFD", "-1, F_GETFD", KERNEL),
    P(fcntl, "F_SETFD", "-1, F_SETFD, 0", KERNEL),
    P(fcntl, "F_GETFL", "-1, F_GETFL", KERNEL),
    P(fcntl, "F_SETFL", "-1, F_SETFL, 0", KERNEL),
    P(fcntl, "F_GETLK", "-1, F_GETLK, 0", KERNEL),
    P(fcntl, "F_SETLK", "-1, F_SETLK, 0", KERNEL),
    P(fcntl, "F_SETLKW", "-1, F_SETLKW, 0", KERNEL),
    P(fcntl, "F_OFD_GETLK", "-1, F_OFD_GETLK, 0", KERNEL),
    P(fcntl, "F_OFD_SETLK", "-1, F_OFD_SETLK, 0", KERNEL),
    P(fcntl, "F_OFD_SETLKW", "-1, F_OFD_SETLKW, 0", KERNEL),
    P(fcntl, "F_GETPIPE_SZ", "-1, F_GETPIPE_SZ", KERNEL),
    P(fcntl, "F_SETOWN", "-1, F_SETOWN, me", EPERM_),
    P(fcntl, "F_SETOWN_EX", "-1, F_SETOWN_EX, 0", EPERM_),
    P(fcntl, "F_SETSIG", "-1, F_SETSIG, 0", EPERM_),
    P(fcntl, "F_SETLEASE", "-1, F_SETLEASE, 0", EPERM_),
    P(fcntl, "F_NOTIFY", "-1, F_NOTIFY, 0", EPERM_),
    P(fcntl, "F_SETPIPE_SZ", "-1, F_SETPIPE_SZ, 4096", EPERM_),
    P(fcntl, "F_GETOWN", "-1, F_GETOWN", EPERM_),
    P(fcntl, "F_GETFD | 1 << 32", "-1, HIGH | F_GETFD", EPERM_),
    /* ioctl: the six requests on fd -1 get EBADF; any other, or one of
     * them with a high bit set (the kernel reads 32 bits), EPERM. */
    P(ioctl, "TCGETS", "-1, TCGETS, 0", KERNEL),
    P(ioctl, "TIOCGWINSZ", "-1, TIOCGWINSZ, 0", KERNEL),
    P(ioctl, "FIONBIO", "-1, FIONBIO, 0", KERNEL),
    P(ioctl, "FIOCLEX", "-1, FIOCLEX, 0", KERNEL),
    P(ioctl, "FIONCLEX", "-1, FIONCLEX, 0", KERNEL),
    P(ioctl, "FIONREAD", "-1, FIONREAD, 0", KERNEL),
    P(ioctl, "TIOCSTI", "-1, TIOCSTI, 0", EPERM_),
    P(ioctl, "FIOASYNC", "-1, FIOASYNC, 0", EPERM_),
    P(ioctl, "TCGETS | 1 << 32", "-1, HIGH | TCGETS, 0", EPERM_),
    P(ioctl, "FIONREAD | 1 << 63", "-1, (1 << 63) | FIONREAD, 0", EPERM_),
    P(ioctl, "TIOCSTI | 1 << 32", "-1, HIGH | TIOCSTI, 0", EPERM_),
    /* Modes, on a NULL path (EFAULT) or fd -1 (EBADF): a new file or
     * directory with any permission bits (the umask takes them) but no
     * setuid, setgid or sticky bit; chmod of the owner's bits only; a
     * umask that keeps 077. A high bit, which the kernel drops from a
     * mode, changes nothing. */
    P(open, "O_CREAT, 0777", "0, os.O_CREAT, 0o777", KERNEL),
    P(open, "no mode", "0, 0, 0", KERNEL),
    P(open, "O_CREAT, 04755", "0, os.O_CREAT, 0o4755", EPERM_),
    P(open, "O_CREAT, 02755", "0, os.O_CREAT, 0o2755", EPERM_),
    P(open, "O_CREAT, 01777", "0, os.O_CREAT, 0o1777", EPERM_),
    P(openat, "O_CREAT, 0666", "-100, 0, os.O_CREAT, 0o666", KERNEL),
    P(openat, "O_CREAT, 0666 | 1 << 32", "-100, 0, os.O_CREAT, HIGH | 0o666", KERNEL),
    P(openat, "O_CREAT, 04700", "-100, 0, os.O_CREAT, 0o4700", EPERM_),
    P(openat, "O_TMPFILE, 02700", "-100, 0, os.O_TMPFILE | os.O_RDWR, 0o2700", EPERM_),
    P(mkdir, "0777", "0, 0o777", KERNEL),
    P(mkdir, "01777", "0, 0o1777", EPERM_),
    P(mkdirat, "0700", "-100, 0, 0o700", KERNEL),
    P(mkdirat, "02700", "-100, 0, 0o2700", EPERM_),
    P(chmod, "0700", "0, 0o700", KERNEL),
    P(chmod, "0", "0, 0", KERNEL),
    P(chmod, "0700 | 1 << 32", "0, HIGH | 0o700", KERNEL),
    P(chmod, "0755", "0, 0o755", EPERM_),
    P(chmod, "0740 (group read)", "0, 0o740", EPERM_),
    P(chmod, "0701 (others search)", "0, 0o701", EPERM_),
    P(chmod, "04700 (setuid)", "0, 0o4700", EPERM_),
    P(chmod, "02700 (setgid)", "0, 0o2700", EPERM_),
    P(chmod, "01700 (sticky)", "0, 0o1700", EPERM_),
    P(fchmod, "0600", "-1, 0o600", KERNEL),
    P(fchmod, "0666", "-1, 0o666", EPERM_),
    P(fchmod, "04755", "-1, 0o4755", EPERM_),
    P(fchmodat, "0500", "-100, 0, 0o500", KERNEL),
    P(fchmodat, "0777", "-100, 0, 0o777", EPERM_),
    P(fchmodat, "06700", "-100, 0, 0o6700", EPERM_),
    P(umask, "to its own value", "um", KERNEL),
    P(umask, "0777", "0o777", KERNEL),
    P(umask, "022", "0o22", EPERM_),
    P(umask, "0", "0", EPERM_),
    /* fallocate: mode 0 and PUNCH_HOLE | KEEP_SIZE on fd -1 get EBADF;
     * KEEP_SIZE alone or with ZERO_RANGE, which allocate past the size
     * where RLIMIT_FSIZE does not look, and any other mode, EPERM. */
    P(fallocate, "mode 0", "-1, 0, 0, 1", KERNEL),
    P(fallocate, "PUNCH_HOLE | KEEP_SIZE", "-1, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1",
      KERNEL),
    P(fallocate, "KEEP_SIZE", "-1, FALLOC_FL_KEEP_SIZE, 0, 1", EPERM_),
    P(fallocate, "ZERO_RANGE", "-1, FALLOC_FL_ZERO_RANGE, 0, 1", EPERM_),
    P(fallocate, "ZERO_RANGE | KEEP_SIZE", "-1, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0, 1",
      EPERM_),
    P(fallocate, "INSERT_RANGE", "-1, FALLOC_FL_INSERT_RANGE, 0, 1", EPERM_),
    P(fallocate, "mode 0 | 1 << 32", "-1, HIGH, 0, 1", EPERM_),
    /* clone: all the thread flags and no namespace flag. CLONE_PIDFD
     * with CLONE_PARENT_SETTID makes the kernel refuse before it creates
     * anything (EINVAL), so nothing starts even where allowed. */
    P(clone, "thread flags", "THREAD | BAD_PAIR, 0, 0, 0, 0", KERNEL),
    P(clone, "fork (SIGCHLD)", "SIGCHLD | BAD_PAIR, 0, 0, 0, 0", EPERM_),
    P(clone, "thread flags but CLONE_THREAD", "(THREAD & ~CLONE_THREAD) | BAD_PAIR, 0, 0, 0, 0",
      EPERM_),
    P(clone, "thread flags but CLONE_VM", "(THREAD & ~CLONE_VM) | BAD_PAIR, 0, 0, 0, 0", EPERM_),
    P(clone, "+ CLONE_NEWNS", "THREAD | BAD_PAIR | CLONE_NEWNS, 0, 0, 0, 0", EPERM_),
    P(clone, "+ CLONE_NEWCGROUP", "THREAD | BAD_PAIR | CLONE_NEWCGROUP, 0, 0, 0, 0", EPERM_),
    P(clone, "+ CLONE_NEWUTS", "THREAD | BAD_PAIR | CLONE_NEWUTS, 0, 0, 0, 0", EPERM_),
    P(clone, "+ CLONE_NEWIPC", "THREAD | BAD_PAIR | CLONE_NEWIPC, 0, 0, 0, 0", EPERM_),
    P(clone, "+ CLONE_NEWUSER", "THREAD | BAD_PAIR | CLONE_NEWUSER, 0, 0, 0, 0", EPERM_),
    P(clone, "+ CLONE_NEWPID", "THREAD | BAD_PAIR | CLONE_NEWPID, 0, 0, 0, 0", EPERM_),
    P(clone, "+ CLONE_NEWNET", "THREAD | BAD_PAIR | CLONE_NEWNET, 0, 0, 0, 0", EPERM_),
    /* clone3: ENOSYS, so glibc falls back to clone. */
    P(clone3, "NULL", "0, 0", ENOSYS_),
    P(clone3, "a size", "0, 88", ENOSYS_),
    /* prlimit64: read-only (new NULL) on pid 0. */
    P(prlimit64, "read own, pid 0", "0, RLIMIT_NOFILE, 0, 0", KERNEL),
    P(prlimit64, "own pid by number", "me, RLIMIT_NOFILE, 0, 0", EPERM_),
    P(prlimit64, "another pid", "NOPID, RLIMIT_NOFILE, 0, 0", EPERM_),
    P(prlimit64, "the host", "parent, RLIMIT_NOFILE, 0, 0", EPERM_),
    P(prlimit64, "a new limit", "0, RLIMIT_NOFILE, 1, 0", EPERM_),
    P(prlimit64, "pid 0 | 1 << 32", "HIGH, RLIMIT_NOFILE, 0, 0", EPERM_),
    /* prctl: PR_SET_NAME and PR_GET_NAME only. */
    P(prctl, "PR_SET_NAME", "PR_SET_NAME, 0, 0, 0, 0", KERNEL),
    P(prctl, "PR_GET_NAME", "PR_GET_NAME, 0, 0, 0, 0", KERNEL),
    P(prctl, "PR_SET_NAME | 1 << 32", "HIGH | PR_SET_NAME, 0, 0, 0, 0", EPERM_),
    P(prctl, "PR_SET_DUMPABLE", "PR_SET_DUMPABLE, 99, 0, 0, 0", EPERM_),
    P(prctl, "PR_GET_DUMPABLE", "PR_GET_DUMPABLE, 0, 0, 0, 0", EPERM_),
    P(prctl, "PR_SET_PDEATHSIG", "PR_SET_PDEATHSIG, BADSIG, 0, 0, 0", EPERM_),
    P(prctl, "PR_SET_SECCOMP", "PR_SET_SECCOMP, 99, 0, 0, 0", EPERM_),
    P(prctl, "PR_SET_NO_NEW_PRIVS", "PR_SET_NO_NEW_PRIVS, 2, 0, 0, 0", EPERM_),
    P(prctl, "PR_CAP_AMBIENT", "PR_CAP_AMBIENT, 99, 0, 0, 0", EPERM_),
    /* rt_sigaction: signals 0 to 64, but no new action for SIGSYS, whose
     * handler reports violations to the host; past 64 the filter refuses
     * what the kernel would (EINVAL). */
    P(rt_sigaction, "signal 0", "0, 0, 0, 8", KERNEL),
    P(rt_sigaction, "read SIGINT", "SIGINT, 0, 0, 8", KERNEL),
    P(rt_sigaction, "read SIGRTMIN", "32, 0, 0, 8", KERNEL),
    P(rt_sigaction, "read signal 64", "64, 0, 0, 8", KERNEL),
    P(rt_sigaction, "read SIGSYS", "SIGSYS, 0, 0, 8", KERNEL),
    P(rt_sigaction, "set SIGSYS", "SIGSYS, 1, 0, 8", EPERM_),
    P(rt_sigaction, "set SIGSYS | 1 << 32", "HIGH | SIGSYS, 1, 0, 8", EPERM_),
    P(rt_sigaction, "set signal 65", "65, 1, 0, 8", EPERM_),
    /* kill and tgkill: to the worker only. An invalid signal makes the
     * kernel answer EINVAL before any permission check, so EPERM is the
     * filter's whoever the target. */
    P(kill, "self, signal 0", "me, 0", KERNEL),
    P(kill, "self, bad signal", "me, BADSIG", KERNEL),
    P(kill, "the host", "parent, BADSIG", EPERM_),
    /* pid 1: in a PID namespace of the worker's own, that is itself. */
    P(kill, "init, where it can be named", "NOPID if me == 1 else 1, BADSIG", EPERM_),
    P(kill, "own group (0)", "0, BADSIG", EPERM_),
    P(kill, "own group (-pid)", "-me, BADSIG", EPERM_),
    P(kill, "everyone (-1)", "-1, BADSIG", EPERM_),
    P(kill, "no such pid", "NOPID, 0", EPERM_),
    P(kill, "self | 1 << 32", "HIGH | me, BADSIG", EPERM_),
    P(tgkill, "own thread, signal 0", "me, tid, 0", KERNEL),
    P(tgkill, "own thread, bad signal", "me, tid, BADSIG", KERNEL),
    /* The kernel checks that the thread belongs to the group: ESRCH. */
    P(tgkill, "own group, the host as thread", "me, parent, 0", KERNEL),
    P(tgkill, "the host", "parent, parent, BADSIG", EPERM_),
    P(tgkill, "no such group", "NOPID, tid, 0", EPERM_),
    /* socketpair: AF_UNIX and SOCK_STREAM only (a SOCK_DGRAM pair could
     * sendto() a named unix socket outside); a NULL result array makes
     * the kernel say EFAULT. */
    P(socketpair, "AF_UNIX, SOCK_STREAM", "AF_UNIX, socket.SOCK_STREAM, 0, 0", KERNEL),
    P(socketpair, "AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK",
      "AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK, 0, 0", KERNEL),
    P(socketpair, "AF_UNIX, SOCK_DGRAM", "AF_UNIX, socket.SOCK_DGRAM, 0, 0", EPERM_),
    P(socketpair, "AF_UNIX, SOCK_SEQPACKET", "AF_UNIX, socket.SOCK_SEQPACKET, 0, 0", EPERM_),
    P(socketpair, "AF_UNIX, SOCK_STREAM | 1 << 32", "AF_UNIX, HIGH | socket.SOCK_STREAM, 0, 0", EPERM_),
    P(socketpair, "AF_INET, SOCK_STREAM", "AF_INET, socket.SOCK_STREAM, 0, 0", EPERM_),
    P(socketpair, "AF_NETLINK", "AF_NETLINK, socket.SOCK_STREAM, 0, 0", EPERM_),
    P(socketpair, "AF_UNIX | 1 << 32", "HIGH | AF_UNIX, socket.SOCK_STREAM, 0, 0", EPERM_),
};

static void test_argument_rules_refuse_perturbed_arguments(void **state)
{
    run_probes(conditional, sizeof conditional / sizeof *conditional);
}

/* ------------------------------------------------- not on the list */

/* A sample of calls no rule names: the default action, EPERM. Only calls
 * harmless had they reached the kernel. */
static const struct probe unlisted[] = {
    P(execve, "NULL", "0, 0, 0", EPERM_),
    P(execveat, "fd -1", "-1, 0, 0, 0, 0", EPERM_),
    P(socket, "AF_UNIX, bad type", "AF_UNIX, 999, 0", EPERM_),
    P(socket, "AF_INET, bad type", "AF_INET, 999, 0", EPERM_),
    P(connect, "fd -1", "-1, 0, 0", EPERM_),
    P(bind, "fd -1", "-1, 0, 0", EPERM_),
    P(listen, "fd -1", "-1, 0", EPERM_),
    P(accept, "fd -1", "-1, 0, 0", EPERM_),
    P(accept4, "fd -1", "-1, 0, 0, 0", EPERM_),
    P(tkill, "own thread, bad signal", "tid, BADSIG", EPERM_),
    P(rt_sigqueueinfo, "self, bad signal", "me, BADSIG, 0", EPERM_),
    P(rt_tgsigqueueinfo, "self, bad signal", "me, tid, BADSIG, 0", EPERM_),
    P(pidfd_open, "bad flags", "me, 0x7fffffff", EPERM_),
    P(pidfd_send_signal, "fd -1", "-1, 0, 0, 0", EPERM_),
    P(pidfd_getfd, "fd -1", "-1, 0, 0", EPERM_),
    P(setuid, "-1", "-1", EPERM_),
    P(setgid, "-1", "-1", EPERM_),
    P(setresuid, "no change", "-1, -1, -1", EPERM_),
    P(setgroups, "bad size", "-1, 0", EPERM_),
    P(capset, "NULL", "0, 0", EPERM_),
    P(chown, "NULL", "0, 0, 0", EPERM_),
    P(fchown, "fd -1", "-1, 0, 0", EPERM_),
    P(seccomp, "bad operation", "99, 0, 0", EPERM_),
    P(setpriority, "bad which", "99, 0, 0", EPERM_),
    P(sched_setaffinity, "size 0", "0, 0, 0", EPERM_),
    P(memfd_create, "NULL", "0, 0", EPERM_),
    P(mknod, "NULL", "0, 0, 0", EPERM_),
    P(personality, "query", "0xffffffff", EPERM_),
    P(sethostname, "too long", "0, 9999", EPERM_),
    P(landlock_create_ruleset, "bad flags", "0, 0, 99", EPERM_),
    P(inotify_init1, "bad flags", "-1", EPERM_),
    P(splice, "fd -1", "-1, 0, -1, 0, 0, 0", EPERM_),
    P(mincore, "unaligned", "1, 4096, 0", EPERM_),
    /* A mode in a struct the filter cannot read; a mode past the
     * filter's rules (Linux 6.6); creat, which glibc makes with openat. */
    {"openat2 NULL", 437, "-100, 0, 0, 0", EPERM_},
    {"fchmodat2 NULL", 452, "-100, 0, 0o700, 0", EPERM_},
    P(creat, "NULL", "0, 0o600", EPERM_),
    /* The machine's memory, process count and load. */
    P(sysinfo, "NULL", "0", EPERM_),
    /* A number past the table: the default action too. */
    {"syscall 1000", 1000, "", EPERM_},
};

static void test_calls_off_the_list_fail_with_eperm(void **state)
{
    run_probes(unlisted, sizeof unlisted / sizeof *unlisted);
}

/* exit and exit_group cannot be probed with harmless arguments; these
 * show they reach the kernel. */
static void test_thread_and_process_exit_work(void **state)
{
    /* A thread's end is exit(2): were it refused, glibc would retry it
     * forever and the thread would never leave /proc/self/task. */
    h_expect_cell(S, "seccomp_thread_exit_leaves_the_task_list", "True", "");
    /* os._exit is exit_group(2): the worker exits with the code asked
     * for, not killed by a signal. */
    ci_result *r = h_run_status(S, "import os\nos._exit(7)", CI_STATUS_KILLED);
    h_assert_str(ci_result_error_name(r), "WorkerDied");
    h_assert_contains(ci_result_error_value(r), "exited with status 7");
    ci_result_free(r);
}

/* ------------------------------------------------------ the kill list */

struct lethal {
    const char *name;
    const char *code; /* a cell that makes the call */
};

#define RAW "import ctypes\nctypes.CDLL(None).syscall"
#define K(sys, args) {#sys, RAW "(" XSTR(SYS_##sys) ", " args ")"}
#define XSTR(x) STR(x)
#define STR(x) #x

/* Every KILL() rule, with arguments that would harm nothing had the call
 * run; then other architectures' numbers. */
static const struct lethal lethal[] = {
    K(ptrace, "99999, 0, 0, 0"),
    K(process_vm_readv, "-1, 0, 0, 0, 0, 0"),
    K(process_vm_writev, "-1, 0, 0, 0, 0, 0"),
    K(bpf, "-1, 0, 0"),
    K(perf_event_open, "0, -1, -1, -1, 0"),
    K(userfaultfd, "-1"),
    K(keyctl, "-1, 0, 0, 0, 0"),
    K(add_key, "0, 0, 0, 0, 0"),
    K(request_key, "0, 0, 0, 0"),
    K(io_uring_setup, "0, 0"),
    K(io_uring_enter, "-1, 0, 0, 0, 0, 0"),
    K(io_uring_register, "-1, 0, 0, 0"),
    K(mount, "0, 0, 0, 0, 0"),
    K(umount2, "0, -1"),
    K(unshare, "0"),
    K(setns, "-1, 0"),
    K(pivot_root, "0, 0"),
    K(chroot, "0"),
    K(init_module, "0, 0, 0"),
    K(finit_module, "-1, 0, 0"),
    K(delete_module, "0, 0"),
    K(kexec_load, "0, 0, 0, -1"),
    K(kexec_file_load, "-1, -1, 0, 0, -1"),
    K(open_by_handle_at, "-1, 0, 0"),
    K(name_to_handle_at, "-100, 0, 0, 0, 0"),
    K(fsopen, "0, -1"),
    K(fsconfig, "-1, -1, 0, 0, 0"),
    K(fsmount, "-1, -1, 0"),
    K(fspick, "-1, 0, -1"),
    K(move_mount, "-1, 0, -1, 0, -1"),
    K(open_tree, "-1, 0, -1"),
    K(mount_setattr, "-1, 0, -1, 0, 0"),
    K(iopl, "99"),
    K(ioperm, "0, 0, 0"),
    K(swapon, "0, 0"),
    K(swapoff, "0"),
    K(reboot, "0, 0, 0, 0"),
    K(acct, "0"),
    K(quotactl, "0, 0, 0, 0"),
    /* x32 numbers (bit 0x40000000), of an allowed call and of a listed
     * one: the filter's architecture check, not the table. */
    {"x32 read", RAW "(0x40000000 | " XSTR(SYS_read) ", -1, 0, 0)"},
    {"x32 ptrace", RAW "(0x40000000 | " XSTR(SYS_ptrace) ", 99999, 0, 0, 0)"},
    /* i386 through int 0x80: close(-1) (eax 6, ebx -1), then ret. */
    {"i386 close",
     "import ctypes, mmap\n"
     "m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
     "m.write(b'\\xb8\\x06\\x00\\x00\\x00\\xbb\\xff\\xff\\xff\\xff\\xcd\\x80\\xc3')\n"
     "ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))()"},
};

/*
 * Each call needs a worker of its own, so each costs a restart (about
 * 0.6 s). The worker may name the call to the host before it dies; either
 * way the host reports CI_STATUS_KILLED and "SandboxViolation", which is
 * what this checks. The loop goes on past a failure and reports every call that
 * did not kill, with what it did instead.
 */
static void test_kill_list_kills_the_worker(void **state)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof lethal / sizeof *lethal; i++) {
        h_ensure_alive(S);
        ci_result *r = h_run(S, lethal[i].code);
        const char *name = ci_result_error_name(r);
        if (ci_result_status(r) != CI_STATUS_KILLED || !name ||
            strcmp(name, "SandboxViolation") != 0 || ci_session_pid(S) != -1) {
            print_error("  %-20s %s %s: %s\n", lethal[i].name,
                        h_status_name(ci_result_status(r)), name ? name : "(no error)",
                        ci_result_value(r) ? ci_result_value(r)
                                           : ci_result_error_value(r) ? ci_result_error_value(r)
                                                                      : "");
            bad++;
        }
        ci_result_free(r);
    }
    h_ensure_alive(S);
    if (bad)
        fail_msg("%d of %zu kill-listed calls did not end in a SandboxViolation", bad,
                 sizeof lethal / sizeof *lethal);
}

int main(int argc, char **argv)
{
    /* About 45 restarts for the kill list, at 0.6 s each. */
    h_watchdog(200);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_allowed_calls_reach_the_kernel, h_setup_alive),
        cmocka_unit_test_setup(test_argument_rules_refuse_perturbed_arguments, h_setup_alive),
        cmocka_unit_test_setup(test_calls_off_the_list_fail_with_eperm, h_setup_alive),
        /* These end the worker; the setup restarts it. */
        cmocka_unit_test_setup(test_thread_and_process_exit_work, h_setup_alive),
        cmocka_unit_test_setup(test_kill_list_kills_the_worker, h_setup_alive),
    };
    return cmocka_run_group_tests_name("seccomp", tests, group_setup, h_group_teardown);
}
