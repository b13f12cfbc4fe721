/*
 * The worker's seccomp filter: what a Python data-science process needs,
 * one rule a line with its reason, applied with libseccomp.
 *
 * Anything not listed fails with EPERM, so a cell gets a Python exception
 * and the session goes on. Among the calls refused that way on purpose:
 * fork, vfork, execve, execveat (os.fork, subprocess, os.system fail
 * cleanly); socket of any family, connect, bind, listen, accept (no
 * network); tkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_*
 * (signals leave the process only through kill and tgkill, checked
 * below); chown, setuid and the other credential calls; seccomp itself;
 * sysinfo, whose figures are the machine's (free memory, process count,
 * load), not the session's, and change with what other sessions do.
 * glibc 2.36 does not check sysinfo's failure: sysconf(_SC_PHYS_PAGES)
 * answers 0 (qsort then sorts in place instead of in a copy) and
 * _SC_AVPHYS_PAGES an uninitialised value, so the worker's os.sysconf
 * answers both from the memory limit (refusals.py).
 * The calls at the end of the table are trapped instead: the worker names
 * the call to the host and dies by SIGSYS (see on_sigsys).
 *
 * The filter is for x86_64 only. Any other architecture, i386's int 0x80
 * included, takes the bad-architecture action, which kills the process;
 * so do x32 numbers (bit 0x40000000), for which libseccomp adds that same
 * check to an x86_64-only filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "proto.h"
#include "worker.h"

#ifndef __x86_64__
#error "the seccomp filter is written for x86_64"
#endif

/* The flags glibc's pthread_create passes to clone. */
#define THREAD_FLAGS                                                     \
    (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |  \
     CLONE_SYSVSEM)
/* The flags glibc's fork() passes to clone: a process, not a thread.
 * The table allows them for the pid filter to decide: refused, or in a
 * session with rollback sent to the host, which approves the
 * checkpoint's fork alone (ci_seccomp_load). */
#define FORK_FLAGS (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD)
/* Namespaces, which a thread of ours never creates. */
#define NEW_NAMESPACES                                                   \
    (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |       \
     CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

enum cond {
    ANY,     /* no condition on the arguments */
    EQ,      /* argument == value, all 64 bits */
    MASKED,  /* (argument & mask) == value, all 64 bits */
    SELF,    /* argument == the worker's pid */
    EQ2,     /* argument == value, and argument arg2 == value2 */
    EQ_MASKED2, /* argument == value, and (argument arg2 & mask) == value2 */
    LT,      /* argument < value, unsigned, all 64 bits */
};

struct rule {
    int nr;
    const char *name;
    uint32_t action;
    enum cond cond;
    unsigned arg;
    uint64_t mask;
    uint64_t value;
    unsigned arg2;
    uint64_t value2;
};

#define RULE(act, sys, c, a, m, v) {SCMP_SYS(sys), #sys, act, c, a, m, v, 0, 0}
#define ALLOW(sys) RULE(SCMP_ACT_ALLOW, sys, ANY, 0, 0, 0)
#define ALLOW_IF(sys, a, v) RULE(SCMP_ACT_ALLOW, sys, EQ, a, 0, v)
#define ALLOW_MASKED(sys, a, m, v) RULE(SCMP_ACT_ALLOW, sys, MASKED, a, m, v)
#define ALLOW_SELF(sys, a) RULE(SCMP_ACT_ALLOW, sys, SELF, a, 0, 0)
#define ALLOW_IF2(sys, a, v, a2, v2) {SCMP_SYS(sys), #sys, SCMP_ACT_ALLOW, EQ2, a, 0, v, a2, v2}
#define ALLOW_IF_MASKED2(sys, a, v, a2, m2, v2) \
    {SCMP_SYS(sys), #sys, SCMP_ACT_ALLOW, EQ_MASKED2, a, m2, v, a2, v2}
#define FAIL(sys, err) RULE(SCMP_ACT_ERRNO(err), sys, ANY, 0, 0, 0)
#define ALLOW_LT(sys, a, v) RULE(SCMP_ACT_ALLOW, sys, LT, a, 0, v)
/* Trapped, not killed outright: the SIGSYS handler below names the call
 * to the host, then dies by SIGSYS. The call itself never runs. */
#define KILL(sys) RULE(SCMP_ACT_TRAP, sys, ANY, 0, 0, 0)

static const struct rule rules[] = {
    /* memory */
    ALLOW(brk),                    /* malloc */
    ALLOW(mmap),                   /* malloc, dlopen, numpy memmap */
    ALLOW(munmap),
    ALLOW(mprotect),               /* dlopen, thread stack guards */
    ALLOW(mremap),                 /* realloc of large blocks */
    ALLOW(madvise),                /* malloc trimming, numpy hugepages */
    ALLOW(msync),                  /* mmap.flush, numpy memmap */

    /* descriptors */
    ALLOW(read),
    ALLOW(write),
    ALLOW(pread64),
    ALLOW(pwrite64),
    ALLOW(readv),
    ALLOW(writev),
    ALLOW(preadv),
    ALLOW(pwritev),
    ALLOW(preadv2),
    ALLOW(pwritev2),
    ALLOW(lseek),
    ALLOW(close),
    ALLOW(close_range),            /* os.closerange */
    ALLOW(dup),
    ALLOW(dup2),
    ALLOW(dup3),
    ALLOW(fstat),
    ALLOW(fstatfs),                /* os.fstatvfs */
    ALLOW(ftruncate),
    ALLOW(fsync),
    ALLOW(fdatasync),
    /* fallocate: mode 0 (os.posix_fallocate, glibc's posix_fallocate),
     * which extends the size and so meets RLIMIT_FSIZE, and punching a
     * hole, which only frees; not FALLOC_FL_KEEP_SIZE or ZERO_RANGE with
     * it, which allocate past the size where the file limit never looks.
     * The mode is an int: compared on all 64 bits, a high bit refused. */
    ALLOW_IF(fallocate, 1, 0),
    ALLOW_IF(fallocate, 1, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE),
    ALLOW(fadvise64),              /* os.posix_fadvise */
    ALLOW(flock),                  /* fcntl.flock on the cell's own files */
    ALLOW(getdents64),             /* os.listdir, os.scandir */
    ALLOW(sendfile),               /* shutil.copyfile */
    ALLOW(copy_file_range),        /* os.copy_file_range */
    ALLOW(pipe),
    ALLOW(pipe2),                  /* os.pipe */
    ALLOW(eventfd2),               /* os.eventfd */
    /* fcntl: descriptor flags and locks. Not F_SETOWN, F_SETOWN_EX or
     * F_SETSIG, which would let SIGIO reach another process, nor
     * F_SETLEASE or F_NOTIFY, which signal too. */
    ALLOW_IF(fcntl, 1, F_DUPFD),
    ALLOW_IF(fcntl, 1, F_DUPFD_CLOEXEC),
    ALLOW_IF(fcntl, 1, F_GETFD),
    ALLOW_IF(fcntl, 1, F_SETFD),
    ALLOW_IF(fcntl, 1, F_GETFL),
    ALLOW_IF(fcntl, 1, F_SETFL),   /* O_NONBLOCK; O_ASYNC signals nobody */
    ALLOW_IF(fcntl, 1, F_GETLK),
    ALLOW_IF(fcntl, 1, F_SETLK),
    ALLOW_IF(fcntl, 1, F_SETLKW),
    ALLOW_IF(fcntl, 1, F_OFD_GETLK),
    ALLOW_IF(fcntl, 1, F_OFD_SETLK),
    ALLOW_IF(fcntl, 1, F_OFD_SETLKW),
    ALLOW_IF(fcntl, 1, F_GETPIPE_SZ),
    /* ioctl: the few requests Python and its libraries make, compared on
     * all 64 bits so TIOCSTI with high bits set cannot slip through (the
     * kernel reads only the low 32). */
    ALLOW_IF(ioctl, 1, TCGETS),    /* isatty() */
    ALLOW_IF(ioctl, 1, TIOCGWINSZ), /* os.get_terminal_size() */
    ALLOW_IF(ioctl, 1, FIONBIO),   /* socket.setblocking() */
    ALLOW_IF(ioctl, 1, FIOCLEX),   /* os.set_inheritable(): EPERM raises */
    ALLOW_IF(ioctl, 1, FIONCLEX),
    ALLOW_IF(ioctl, 1, FIONREAD),  /* bytes waiting on a pipe or socket */

    /* paths: the cell works in its workspace; the host, not the filter,
     * guards against the links a cell may plant there */
    /* Modes: no file or directory a cell makes or changes is setuid,
     * setgid or sticky, or lets another user in (SECURITY.md, "File
     * modes"). A new one's permission bits are the umask's, 077 from
     * ci_lockdown() on, so a mode it is made with may ask for any
     * permission bits but none of 07000 (the umask leaves those); chmod
     * may set the owner's bits only. The kernel reads a mode as 16 bits
     * and ignores the file type: the mask looks at exactly the bits that
     * count. openat2, whose mode is in a struct the filter cannot read,
     * is not allowed: it fails with EPERM and glibc does not use it. */
    ALLOW_MASKED(open, 2, 07000, 0),   /* a new file: no setuid, setgid, sticky */
    ALLOW_MASKED(openat, 3, 07000, 0), /* the same, as glibc's open and creat */
    ALLOW(stat),
    ALLOW(lstat),
    ALLOW(newfstatat),
    ALLOW(statx),
    ALLOW(statfs),                 /* os.statvfs, shutil.disk_usage */
    ALLOW(access),
    ALLOW(faccessat),
    ALLOW(faccessat2),             /* glibc falls back only on ENOSYS */
    ALLOW(readlink),
    ALLOW(readlinkat),
    ALLOW(getcwd),
    ALLOW(chdir),
    ALLOW(fchdir),
    ALLOW_MASKED(mkdir, 1, 07000, 0),  /* a new directory: the same */
    ALLOW_MASKED(mkdirat, 2, 07000, 0),
    ALLOW(rmdir),
    ALLOW(unlink),
    ALLOW(unlinkat),
    ALLOW(rename),
    ALLOW(renameat),
    /* Not RENAME_WHITEOUT, which leaves a character device (0, 0) where
     * the file was: mknod's job, refused. Flags are an unsigned int:
     * a high bit is ignored, as by the kernel. */
    ALLOW_MASKED(renameat2, 4, RENAME_WHITEOUT, 0),
    ALLOW(link),
    ALLOW(linkat),
    ALLOW(symlink),
    ALLOW(symlinkat),
    ALLOW_MASKED(chmod, 1, 07077, 0),  /* the owner's bits only */
    ALLOW_MASKED(fchmod, 1, 07077, 0),
    ALLOW_MASKED(fchmodat, 2, 07077, 0), /* and glibc's lchmod, via /proc */
    ALLOW(utimensat),              /* os.utime */
    ALLOW(truncate),
    ALLOW_MASKED(umask, 0, 077, 077), /* no group or other bits let back in */
    ALLOW(listxattr),              /* shutil.copy2 raises if listing */
    ALLOW(llistxattr),             /* fails with EPERM (setting may) */
    ALLOW(flistxattr),
    ALLOW(getxattr),
    ALLOW(lgetxattr),
    ALLOW(fgetxattr),

    /* threads (numpy, OpenBLAS, threading) and the process itself */
    ALLOW_MASKED(clone, 0, THREAD_FLAGS | NEW_NAMESPACES, THREAD_FLAGS),
    ALLOW_IF2(clone, 0, FORK_FLAGS, 1, 0), /* the pid filter refuses it, or asks the host */
    ALLOW(wait4),                  /* a worker with rollback reaps its checkpoint */
    FAIL(clone3, ENOSYS),          /* glibc then falls back to clone */
    ALLOW(futex),
    ALLOW(set_robust_list),
    ALLOW(rseq),
    ALLOW(set_tid_address),
    ALLOW(sched_yield),
    ALLOW(sched_getaffinity),      /* OpenBLAS and os.sched_getaffinity */
    ALLOW(getcpu),
    ALLOW(exit),
    ALLOW(exit_group),
    ALLOW(getpid),
    ALLOW(gettid),
    ALLOW(getppid),
    ALLOW(getpgrp),
    /* Our own group and session only (pid 0): with any pid a cell could
     * map which processes exist, the host's and other sessions' included,
     * and watch a zygote's spare change groups as sessions start. */
    ALLOW_IF(getpgid, 0, 0),
    ALLOW_IF(getsid, 0, 0),
    ALLOW(getuid),
    ALLOW(geteuid),
    ALLOW(getgid),
    ALLOW(getegid),
    ALLOW(getresuid),
    ALLOW(getresgid),
    ALLOW(getgroups),
    ALLOW(uname),
    ALLOW(getrusage),
    ALLOW(times),
    ALLOW(getrlimit),
    /* resource.getrlimit: own process, and read only (new_limit NULL), so
     * a cell holding CAP_SYS_RESOURCE cannot raise its hard limits */
    ALLOW_IF2(prlimit64, 0, 0, 2, 0),
    /* and its own RLIMIT_CPU lowered: a checkpoint that took over sets the
     * session's budget left (CPU_BUDGET, proto.h). Without a capability
     * no limit can be raised past the hard one, which is the soft one. */
    ALLOW_IF2(prlimit64, 0, 0, 1, RLIMIT_CPU),
    ALLOW_IF(prctl, 0, PR_SET_NAME),
    ALLOW_IF(prctl, 0, PR_GET_NAME),
    ALLOW(getrandom),              /* os.urandom, hash seeds */

    /* signals, to the worker itself only */
    /* rt_sigaction for any signal but SIGSYS, whose handler reports
     * violations (see trap_install); reading it stays allowed.
     * Compared on all 64 bits, so SIGSYS with high bits set is refused
     * too (the kernel reads only the low 32). */
    ALLOW_LT(rt_sigaction, 0, SIGSYS),
    ALLOW_MASKED(rt_sigaction, 0, ~(uint64_t)0x1f, 0x20), /* 32 to 63 */
    ALLOW_IF(rt_sigaction, 0, 64),
    ALLOW_IF2(rt_sigaction, 0, SIGSYS, 1, 0),
    ALLOW(rt_sigprocmask),
    ALLOW(rt_sigreturn),
    ALLOW(rt_sigpending),
    ALLOW(rt_sigsuspend),
    ALLOW(rt_sigtimedwait),        /* signal.sigwait */
    ALLOW(sigaltstack),
    ALLOW(restart_syscall),
    ALLOW_SELF(kill, 0),           /* os.kill(os.getpid(), ...) */
    ALLOW_SELF(tgkill, 0),         /* raise(), signal.pthread_kill */
    ALLOW(getitimer),
    ALLOW(setitimer),              /* signal.setitimer */
    ALLOW(alarm),                  /* signal.alarm */

    /* time */
    ALLOW(clock_gettime),          /* when the vDSO does not answer */
    ALLOW(clock_getres),
    ALLOW(gettimeofday),
    ALLOW(time),
    ALLOW(nanosleep),
    ALLOW(clock_nanosleep),        /* time.sleep */

    /* waiting */
    ALLOW(poll),
    ALLOW(ppoll),
    ALLOW(select),
    ALLOW(pselect6),
    ALLOW(epoll_create1),          /* asyncio */
    ALLOW(epoll_ctl),
    ALLOW(epoll_wait),
    ALLOW(epoll_pwait),

    /* sockets: only pairs, which reach nothing outside (asyncio's
     * self-pipe); the rest works on those and on the channel */
    /* AF_UNIX and SOCK_STREAM only (SOCK_CLOEXEC and SOCK_NONBLOCK may
     * be or'ed in): a stream pair ignores destination addresses, while a
     * datagram pair could sendto() a named unix socket outside */
    ALLOW_IF_MASKED2(socketpair, 0, AF_UNIX, 1, ~(uint64_t)(SOCK_CLOEXEC | SOCK_NONBLOCK),
                     SOCK_STREAM),
    ALLOW(sendto),
    ALLOW(recvfrom),
    ALLOW(sendmsg),
    ALLOW(recvmsg),
    ALLOW(shutdown),
    ALLOW(getsockname),
    ALLOW(getpeername),
    ALLOW(getsockopt),
    ALLOW(setsockopt),

    /* reaching other processes or the kernel's soft spots: kill at once */
    KILL(ptrace),
    KILL(process_vm_readv),
    KILL(process_vm_writev),
    KILL(bpf),
    KILL(perf_event_open),
    KILL(userfaultfd),
    KILL(keyctl),
    KILL(add_key),
    KILL(request_key),
    KILL(io_uring_setup),          /* io_uring escapes seccomp */
    KILL(io_uring_enter),
    KILL(io_uring_register),
    KILL(mount),
    KILL(umount2),
    KILL(unshare),
    KILL(setns),
    KILL(pivot_root),
    KILL(chroot),
    KILL(init_module),
    KILL(finit_module),
    KILL(delete_module),
    KILL(kexec_load),
    KILL(kexec_file_load),
    KILL(open_by_handle_at),
    KILL(name_to_handle_at),
    KILL(fsopen),
    KILL(fsconfig),
    KILL(fsmount),
    KILL(fspick),
    KILL(move_mount),
    KILL(open_tree),
    KILL(mount_setattr),
    KILL(iopl),
    KILL(ioperm),
    KILL(swapon),
    KILL(swapoff),
    KILL(reboot),
    KILL(acct),
    KILL(quotactl),
};

/* ------------------------------------------------- naming violations */

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp SIGSYS; glibc lacks it */
#endif
#define X32_SYSCALL_BIT 0x40000000L /* asm/unistd.h's __X32_SYSCALL_BIT */
#define SO_PASSPIDFD_ 76            /* asm-generic/socket.h, Linux 6.5; */
#define SO_PEERPIDFD_ 77            /* Debian 12's headers lack them */

static char trap_stack[64 * 1024];

/* The rule table's name for syscall @nr, if it is one we trap. */
static const char *trapped_name(long nr)
{
    for (size_t i = 0; i < sizeof(rules) / sizeof(*rules); i++)
        if (rules[i].nr == nr && rules[i].action == SCMP_ACT_TRAP)
            return rules[i].name;
    return NULL;
}

/*
 * SIGSYS from a trapped call: one VIOLATION frame naming it on the
 * channel, then death by SIGSYS (SA_RESETHAND made the action the
 * default again). Async-signal-safe only. If this cannot run (SIGSYS
 * blocked: the kernel then resets the action and unblocks it), the
 * process still dies by SIGSYS, unnamed.
 */
static void on_sigsys(int sig, siginfo_t *si, void *uctx)
{
    struct {
        struct ci_frame_header h;
        uint32_t nr;
        char name[CI_VIOLATION_NAME_MAX];
    } f;
    const char *name = NULL;
    size_t len = 0;

    (void)uctx;
    /* pid 1 of a PID namespace: the pid filter traps its SIGKILL to
     * itself, which the kernel would ignore (init.c). */
    if (si && si->si_code == SYS_SECCOMP &&
        (si->si_syscall == SYS_kill || si->si_syscall == SYS_tgkill))
        ci_init_die_by(SIGKILL);
    if (si && si->si_code == SYS_SECCOMP)
        name = trapped_name(si->si_syscall);
    if (name) {
        while (name[len] && len < sizeof f.name) {
            f.name[len] = name[len];
            len++;
        }
        f.h.type = CI_FRAME_VIOLATION;
        f.h.len = (uint32_t)(sizeof f.nr + len);
        f.nr = (uint32_t)si->si_syscall;
        send(CI_FD_CHANNEL, &f, sizeof f.h + f.h.len, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
    /* Reached only in pid 1 of a PID namespace, which the kernel spares
     * its own signals (init.c). A call the filter kills outright, an x32
     * number (the bad-architecture action), forces the same SIGSYS. */
    syscall(X32_SYSCALL_BIT | SYS_getpid);
    syscall(SYS_exit_group, 128 + SIGSYS); /* not reached */
}

/* Installs the SIGSYS handler, on an alternate stack of the main thread
 * (other threads run it on their own stack). */
static void trap_install(void)
{
    stack_t ss = {.ss_sp = trap_stack, .ss_size = sizeof trap_stack};
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGSYS, &sa, NULL) != 0)
        ci_fatal(CI_EXIT_SECCOMP, "seccomp: SIGSYS handler: %s", strerror(errno));
}

static _Noreturn void failed(const char *what, const char *name, int rc)
{
    ci_fatal(CI_EXIT_SECCOMP, "seccomp: %s%s%s: %s", what, name ? " " : "",
             name ? name : "", strerror(-rc));
}

/* Adds @r to @ctx; a SELF rule allows the call for any pid here, and the
 * second filter of ci_seccomp_load() narrows it to the worker's own. */
static void add_rule(scmp_filter_ctx ctx, const struct rule *r)
{
    struct scmp_arg_cmp cmp[2] = {{0}};
    unsigned n = 1;
    int rc;

    switch (r->cond) {
    case ANY:
    case SELF:
        n = 0;
        break;
    case EQ:
        cmp[0] = SCMP_CMP64(r->arg, SCMP_CMP_EQ, r->value);
        break;
    case EQ2:
        cmp[0] = SCMP_CMP64(r->arg, SCMP_CMP_EQ, r->value);
        cmp[1] = SCMP_CMP64(r->arg2, SCMP_CMP_EQ, r->value2);
        n = 2;
        break;
    case EQ_MASKED2:
        cmp[0] = SCMP_CMP64(r->arg, SCMP_CMP_EQ, r->value);
        cmp[1] = SCMP_CMP64(r->arg2, SCMP_CMP_MASKED_EQ, r->mask, r->value2);
        n = 2;
        break;
    case MASKED:
        cmp[0] = SCMP_CMP64(r->arg, SCMP_CMP_MASKED_EQ, r->mask, r->value);
        break;
    case LT:
        cmp[0] = SCMP_CMP64(r->arg, SCMP_CMP_LT, r->value);
        break;
    }
    rc = seccomp_rule_add_exact_array(ctx, r->action, r->nr, n, cmp);
    if (rc < 0)
        failed("rule for", r->name, rc);
}

/* A new filter context: @def for calls no rule names, every thread
 * synchronised (OpenBLAS and the watchdog already run), and another
 * architecture or x32 kills the process (libseccomp's default kills only
 * the thread, leaving a hung worker). */
static scmp_filter_ctx new_filter(uint32_t def)
{
    scmp_filter_ctx ctx = seccomp_init(def);
    int rc;

    if (!ctx)
        failed("seccomp_init", NULL, -ENOMEM);
    rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    if (rc == 0)
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (rc < 0)
        failed("filter attributes", NULL, rc);
    return ctx;
}

/* @ctx as BPF in @prog (malloc'ed), through libseccomp's export; @ctx is
 * released. */
static void export_bpf(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
    struct sock_filter *bpf;
    off_t len;
    int fd, rc;

    /* libseccomp 2.5 exports only to a descriptor. */
    fd = memfd_create("seccomp-bpf", MFD_CLOEXEC);
    if (fd < 0)
        failed("memfd_create", NULL, -errno);
    rc = seccomp_export_bpf(ctx, fd);
    if (rc < 0)
        failed("seccomp_export_bpf", NULL, rc);
    seccomp_release(ctx);
    len = lseek(fd, 0, SEEK_END);
    if (len <= 0 || len % sizeof *bpf || len / sizeof *bpf > BPF_MAXINSNS)
        failed("seccomp_export_bpf", "(size)", -EINVAL);
    bpf = malloc((size_t)len);
    if (!bpf || pread(fd, bpf, (size_t)len, 0) != len)
        failed("reading the filter", NULL, bpf ? -EIO : -ENOMEM);
    close(fd);
    prog->filter = bpf;
    prog->len = (unsigned short)(len / sizeof *bpf);
}

/* Adds rule @action for @sys if (@arg's low 32 bits & @mask) == @value:
 * pids and signal numbers are ints, of which the kernel reads 32 bits. */
static int add_masked32(scmp_filter_ctx ctx, uint32_t action, int sys, unsigned arg,
                        uint32_t mask, uint32_t value)
{
    return seccomp_rule_add(ctx, action, sys, 1,
                            SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, (scmp_datum_t)mask, value));
}

/*
 * kill and tgkill to any pid of the namespace from 2 up: the worker
 * itself, and in a session with rollback its checkpoint, which it kills
 * once the cell has ended and which, once it has taken over, signals
 * itself. Refused: 0 and the negative pids (process groups, every
 * process) and 1, the reaper, which takes no signal from inside anyway.
 */
static int keep_signals_in_namespace(scmp_filter_ctx ctx)
{
    static const int sys[] = {SCMP_SYS(kill), SCMP_SYS(tgkill)};
    int err = 0;

    for (size_t i = 0; err == 0 && i < sizeof sys / sizeof *sys; i++) {
        err = add_masked32(ctx, SCMP_ACT_ERRNO(EPERM), sys[i], 0, 0xffffffffu, 0);
        if (err == 0)
            err = add_masked32(ctx, SCMP_ACT_ERRNO(EPERM), sys[i], 0, 0xffffffffu, 1);
        if (err == 0)
            err = add_masked32(ctx, SCMP_ACT_ERRNO(EPERM), sys[i], 0, 0x80000000u, 0x80000000u);
    }
    return err;
}

/*
 * The pid filter of process @pid, a few instructions long: it keeps kill
 * and tgkill to @pid, the part of the filter that depends on the
 * process, refuses two socket options inside calls the table allows, and
 * refuses fork. When filters stack the kernel takes the most restrictive
 * answer (seccomp(2)), so its EPERM beats the table's ALLOW. With
 * @rollback, signals stay within the namespace instead and fork goes to
 * the filter's listener (SECCOMP_RET_USER_NOTIF, seccomp_unotify(2)): the
 * host holds it and lets exactly one clone through, the checkpoint's,
 * from the worker's main thread while it waits for it; any other is
 * refused with EPERM (lib/rollback.c).
 */
static scmp_filter_ctx pid_filter(pid_t pid, int rollback)
{
    scmp_filter_ctx ctx = new_filter(SCMP_ACT_ALLOW);
    int err;

    if (rollback) {
        err = keep_signals_in_namespace(ctx);
    } else {
        err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(kill), 1,
                               SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)pid));
        if (err == 0)
            err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(tgkill), 1,
                                   SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)pid));
    }
    /* pid 1 of a PID namespace: its SIGKILL to itself, which the kernel
     * would ignore, is trapped and reported as that death (init.c). A
     * trap beats the table's ALLOW. */
    if (err == 0 && pid == 1)
        err = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(kill), 2, SCMP_A0(SCMP_CMP_EQ, 1),
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, SIGKILL));
    if (err == 0 && pid == 1)
        err = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(tgkill), 2,
                               SCMP_A0(SCMP_CMP_EQ, 1),
                               SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, SIGKILL));
    /* SO_PEERPIDFD would hand a cell a pidfd of the process at the other
     * end of descriptor 3, the host, and SO_PASSPIDFD one with every
     * message (socket(7), Linux 6.5); the table allows the rest of
     * getsockopt and setsockopt. Options are ints: 32 bits compared. */
    if (err == 0)
        err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(getsockopt), 2,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, SOL_SOCKET),
                               SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, SO_PEERPIDFD_));
    if (err == 0)
        err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setsockopt), 2,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, SOL_SOCKET),
                               SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, SO_PASSPIDFD_));
    if (err == 0)
        err = seccomp_rule_add(ctx, rollback ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EPERM),
                               SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_EQ, FORK_FLAGS));
    if (err < 0)
        failed("the pid filter", NULL, err);
    return ctx;
}

/* The table's filter, and the pid filter of pid 1, as BPF, made once:
 * building one with libseccomp takes a good part of a millisecond, and a
 * zygote's children all load the same ones (each is pid 1 of its own PID
 * namespace, where the kernel gives it that namespace). */
static struct sock_fprog prepared, prepared_init;

void ci_seccomp_prepare(void)
{
    scmp_filter_ctx ctx;

    if (prepared.filter)
        return;
    ctx = new_filter(SCMP_ACT_ERRNO(EPERM));
    for (size_t i = 0; i < sizeof(rules) / sizeof(*rules); i++)
        add_rule(ctx, &rules[i]);
    export_bpf(ctx, &prepared);
    export_bpf(pid_filter(1, 0), &prepared_init);
}

/* Loads @prog with seccomp(2) on every thread; TSYNC answers with the id
 * of a thread it could not synchronise, if any. */
static void load_bpf(const struct sock_fprog *prog, const char *what)
{
    long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, prog);

    if (rc != 0)
        failed(what, NULL, rc < 0 ? -errno : -EAGAIN);
}

int ci_seccomp_load(int rollback)
{
    int listener = -1;

    ci_seccomp_prepare();
    /* The pid filter first: the table's refuses seccomp(2) itself. */
    if (getpid() == 1 && !rollback) {
        load_bpf(&prepared_init, "the pid filter");
    } else {
        scmp_filter_ctx self = pid_filter(getpid(), rollback);
        int err = seccomp_load(self);

        if (err < 0)
            failed("the pid filter", NULL, err);
        /* libseccomp asked for the listener (SECCOMP_FILTER_FLAG_NEW_LISTENER)
         * since the filter notifies. */
        if (rollback && (listener = seccomp_notify_fd(self)) < 0)
            failed("the pid filter's listener", NULL, listener);
        seccomp_release(self);
    }
    trap_install();
    load_bpf(&prepared, "seccomp(SECCOMP_SET_MODE_FILTER)");
    return listener;
}
