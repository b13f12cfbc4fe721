/*
 * The worker's lockdown, in the order it runs, one function per path:
 *
 *   zygote   ci_lockdown_zygote()  its own start, before the warm-up
 *   spare    ci_lockdown_spare()   a zygote's child, before its session
 *   session  ci_lockdown_start()   every worker, single-threaded, before
 *                                  the warm-up (exec) or the configure
 *                                  (zygote's child): credentials, the
 *                                  namespaces a spare did not make
 *            ci_lockdown()         every worker, after the warm-up
 *
 * step (where)                     CI_SANDBOX_* bit      CI_EXIT_*
 * own session, setsid              -                     SETSID
 * parent tie, PR_SET_PDEATHSIG     -                     PDEATHSIG, PARENT
 * user namespace (namespaces.c)    USERNS                NAMESPACES
 * net, IPC, UTS namespaces         NETNS IPCNS UTSNS     NAMESPACES
 * new root (mounts.c)              MNTNS                 NAMESPACES
 * never root (privileges.c)        UNPRIVILEGED          PRIVILEGES
 * no capabilities (privileges.c)   UNPRIVILEGED          PRIVILEGES
 * task limit (tasks.c)             TASK_LIMIT            RLIMIT
 * disk quota check (quota.c)       DISK_QUOTA            -
 * not dumpable                     -                     DUMPABLE
 * signal queue, RLIMIT_SIGPENDING  -                     RLIMIT
 * rlimits AS CORE FSIZE NOFILE CPU RLIMITS               RLIMIT
 * no new privileges                NO_NEW_PRIVS          NO_NEW_PRIVS
 * Landlock                         LANDLOCK              LANDLOCK, MANIFEST
 * seccomp filter (seccomp.c)       SECCOMP               SECCOMP
 *
 * The PID namespace (PIDNS) is the spare's clone (zygote.c). Landlock is
 * late because the warm-up does what no rule allows (matplotlib runs
 * fc-list, which reads /etc/fonts), and the seccomp filter last because
 * it forbids the calls the other steps make.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "manifest.h"
#include "proto.h"
#include "worker.h"

/* Set once ci_tie_to_outside_parent() has checked our parent. */
static int parent_outside;
/* Set once ci_tie_to_reaper() has: our parent is pid 1 (reaper.c). */
static int parent_reaper;

static void set_death_signal(void)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_PDEATHSIG, "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
}

void ci_tie_to_parent(pid_t parent)
{
    set_death_signal();
    /* Checked after setting the signal: a parent that died before it was
     * set has already left us with another parent. A parent outside our
     * PID namespace reads as 0; that one was checked when the signal was
     * first set, and only a change of our ids clears it (commit_creds),
     * which no step after that makes. */
    if (getppid() != parent && !(getppid() == 0 && parent_outside) &&
        !(getppid() == 1 && parent_reaper))
        ci_fatal(CI_EXIT_PARENT, "parent is %d, not %d", (int)getppid(),
                 (int)parent);
}

void ci_tie_to_reaper(void)
{
    set_death_signal();
    /* After the signal, as ci_tie_to_parent(): a reaper that died first
     * has left us to no one (we would be our namespace's last process). */
    if (getppid() != 1)
        ci_fatal(CI_EXIT_PARENT, "parent is %d, not the reaper", (int)getppid());
    parent_reaper = 1;
}

void ci_tie_to_outside_parent(int parent_pidfd)
{
    struct pollfd p = {.fd = parent_pidfd, .events = POLLIN};

    set_death_signal();
    /* A pidfd reads as ready once its process has exited (pidfd_open(2)):
     * a pid would have to be read in a PID namespace we are not in. */
    if (poll(&p, 1, 0) != 0)
        ci_fatal(CI_EXIT_PARENT, "the parent is gone (poll of its pidfd: %d)", (int)p.revents);
    parent_outside = 1;
}

void ci_own_session(void)
{
    if (getsid(0) != getpid() && setsid() < 0)
        ci_fatal(CI_EXIT_SETSID, "setsid: %s", strerror(errno));
}

/* No core dumps, and no ptrace or /proc/PID/mem from same-uid
 * processes. */
static void undumpable(void)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_DUMPABLE, "prctl(PR_SET_DUMPABLE): %s", strerror(errno));
}

static void limit(int resource, const char *name, rlim_t value)
{
    struct rlimit rl = {.rlim_cur = value, .rlim_max = value};

    if (setrlimit(resource, &rl) != 0)
        ci_fatal(CI_EXIT_RLIMIT, "setrlimit(%s, %llu): %s", name,
                 (unsigned long long)value, strerror(errno));
}

/* The CPU budget, on top of the whole seconds the start used: RLIMIT_CPU
 * counts from the process's start, and a worker started by exec spent
 * about a second importing. At the limit the kernel kills it (SIGKILL:
 * soft and hard are one); no cell can raise it, nor set it (the filter
 * lets prlimit64 only read). */
static void limit_cpu(uint64_t seconds)
{
    struct timespec used;

    if (seconds == 0)
        return;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &used) != 0)
        ci_fatal(CI_EXIT_RLIMIT, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID): %s", strerror(errno));
    limit(RLIMIT_CPU, "RLIMIT_CPU", (rlim_t)used.tv_sec + (used.tv_nsec > 0) + seconds);
}

static void limit_signal_queue(uint32_t layers)
{
    /* Counted per user of each user namespace, and again for the user
     * that made it in the namespace above (user_namespaces(7)): in a
     * namespace of its own a worker's count is its own, and this limit
     * bounds what it adds to the count it shares with every other worker
     * of the host's, or the host's own, uid. In the host's namespace the
     * count is shared itself, and a low limit would let one session use
     * it up for all: left as it is there. */
    if (layers & CI_LAYER_USERNS)
        limit(RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", CI_SIGPENDING_MAX);
}

/*
 * Landlock's ruleset attribute as of ABI 6 (Documentation/userspace-api/
 * landlock.rst); Debian 12's <linux/landlock.h> predates its last two
 * fields and the newer access rights, so they are spelled out here.
 */
struct landlock_attr_v6 {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/* The rights that make sense on a file rather than a directory. */
#define LL_FS_FILE_RIGHTS                                                   \
    (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE |  \
     LL_FS_IOCTL_DEV)
#define RO (LL_FS_READ_FILE | LL_FS_READ_DIR)
/* The session's directories: everything a cell does with files, but no
 * symbolic links (a cell could aim them at the host's files), no FIFOs,
 * sockets or device nodes, no execution and no device ioctls. */
#define RW                                                                  \
    (RO | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_MAKE_REG |              \
     LL_FS_MAKE_DIR | LL_FS_REMOVE_FILE | LL_FS_REMOVE_DIR | LL_FS_REFER)

/* Every filesystem right the running ABI knows; handling them all means
 * whatever no rule grants is denied. */
static uint64_t fs_rights(long abi)
{
    uint64_t rights = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0-12 */

    if (abi >= 2)
        rights |= LL_FS_REFER;
    if (abi >= 3)
        rights |= LL_FS_TRUNCATE;
    if (abi >= 5)
        rights |= LL_FS_IOCTL_DEV;
    return rights;
}

/*
 * What a cell may read outside its session directory: what the warm
 * interpreter still opens, and nothing of the host's configuration.
 * Directories are opened without following a final link: on merged-usr
 * systems /lib and /lib64 are links into /usr, which is already allowed.
 * /proc/self is the exception, a link on purpose: it names the worker's
 * own /proc/<pid>, and no other process's (the host's environ and
 * cmdline included).
 */
static const struct {
    const char *path;
    uint64_t access; /* cut to the file rights on a file */
    int follow;      /* follow a final symbolic link */
} system_paths[] = {
    {"/usr", RO, 0},                     /* the interpreter, its packages, fonts, zoneinfo */
    {"/lib", RO, 0},                     /* where /lib and /lib64 are not links into /usr */
    {"/lib64", RO, 0},
    {"/etc/ld.so.cache", RO, 1},         /* dlopen of extensions a cell imports (scipy) */
    {"/etc/localtime", RO, 1},           /* time.localtime(), datetime.now() */
    {"/etc/matplotlibrc", RO, 1},        /* Debian's matplotlib defaults (rc_file_defaults) */
    {"/etc/mime.types", RO, 1},          /* mimetypes raises if it exists but cannot be read */
    {"/sys/devices/system/cpu", RO, 0},  /* os.cpu_count(), OpenBLAS */
    {"/proc/self", RO, 1},               /* the worker's own /proc/<pid> only */
    {"/dev/null", RO | LL_FS_WRITE_FILE, 1},
    {"/dev/zero", RO, 1},
    {"/dev/random", RO, 1},
    {"/dev/urandom", RO, 1},
};

/* Adds a rule for the directory or file open at @fd; @access is cut to
 * what the ABI handles and, on a file, to the file rights. */
static void allow(int ruleset, int fd, uint64_t access, uint64_t handled, const char *what)
{
    struct landlock_path_beneath_attr rule = {.parent_fd = fd};
    struct stat st;

    if (fstat(fd, &st) != 0)
        ci_fatal(CI_EXIT_LANDLOCK, "fstat %s: %s", what, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        access &= LL_FS_FILE_RIGHTS;
    rule.allowed_access = access & handled;
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        ci_fatal(CI_EXIT_LANDLOCK, "landlock_add_rule %s: %s", what, strerror(errno));
}

/* Per system_paths entry: its whole-directory rule is replaced by the
 * manifest's plan (ci_landlock_plan). */
static int carved[sizeof system_paths / sizeof *system_paths];

static void allow_paths(int ruleset, uint64_t handled)
{
    static const char *const session[] = {"workspace", "config", "tmp"};
    int dir, fd;

    for (size_t i = 0; i < sizeof system_paths / sizeof *system_paths; i++) {
        if (carved[i])
            continue;
        fd = open(system_paths[i].path,
                  O_PATH | O_CLOEXEC | (system_paths[i].follow ? 0 : O_NOFOLLOW | O_DIRECTORY));
        if (fd < 0)
            continue; /* missing here, or a link: no rule, so no access */
        allow(ruleset, fd, system_paths[i].access, handled, system_paths[i].path);
        close(fd);
    }
    /* The cwd is the workspace; its parent, the session directory, gets
     * no rule itself, so a cell cannot rename or remove its three
     * directories, nor put anything beside them. */
    dir = open("..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        ci_fatal(CI_EXIT_LANDLOCK, "open the session directory: %s", strerror(errno));
    for (size_t i = 0; i < sizeof session / sizeof *session; i++) {
        fd = openat(dir, session[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            ci_fatal(CI_EXIT_LANDLOCK, "open the session's %s: %s", session[i], strerror(errno));
        allow(ruleset, fd, RW, handled, session[i]);
        close(fd);
    }
    /* The packages the host installs for %pip (lib/wheel.c): read and
     * mapped, never written, by the worker. */
    fd = openat(dir, "site", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        allow(ruleset, fd, RO, handled, "site");
        close(fd);
    }
    close(dir);
}

/* A ruleset handling every right the running ABI knows (*@handled: the
 * filesystem ones); -1 if the kernel has no Landlock. */
static int ruleset_create(uint64_t *handled)
{
    struct landlock_attr_v6 attr = {0};
    size_t size = offsetof(struct landlock_attr_v6, handled_access_net);
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    int fd;

    if (abi < 1)
        return -1;
    attr.handled_access_fs = fs_rights(abi);
    if (abi >= 4) {
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        size = offsetof(struct landlock_attr_v6, scoped);
    }
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (fd < 0)
        ci_fatal(CI_EXIT_LANDLOCK, "landlock_create_ruleset: %s", strerror(errno));
    *handled = attr.handled_access_fs;
    return fd;
}

static const struct ci_manifest_rule *plan_rules;
static size_t plan_n;
static int planned;

void ci_landlock_plan(int zygote)
{
    const char *dirs[sizeof system_paths / sizeof *system_paths];
    size_t n = 0;

    if (planned || !ci_manifest())
        return;
    if (syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) < 1)
        ci_fatal(CI_EXIT_MANIFEST, "manifest: its read rules need Landlock, which this kernel "
                 "does not offer");
    /* Files, and /proc/self, are never carved: only directories. */
    for (size_t i = 0; i < sizeof system_paths / sizeof *system_paths; i++)
        dirs[i] = system_paths[i].follow ? "" : system_paths[i].path;
    n = sizeof system_paths / sizeof *system_paths;
    plan_rules = ci_manifest_plan(dirs, n, carved, &plan_n);
    planned = 1;
    if (zygote)
        ci_manifest_hold();
}

/* A ruleset made ahead with the plan's rules, and what it handles. */
static int prepared = -1;
static uint64_t prepared_handled;

int ci_landlock_prepare(void)
{
    uint64_t handled;
    int fd;

    if (!ci_manifest())
        return -1;
    ci_landlock_plan(0);
    fd = ruleset_create(&handled);
    if (fd < 0)
        ci_fatal(CI_EXIT_MANIFEST, "manifest: its read rules need Landlock, which this kernel "
                 "does not offer");
    for (size_t i = 0; i < plan_n; i++) {
        const struct ci_manifest_rule *r = &plan_rules[i];
        uint64_t access = (r->access & CI_MANIFEST_READ_FILE ? LL_FS_READ_FILE : 0) |
                          (r->access & CI_MANIFEST_READ_DIR ? LL_FS_READ_DIR : 0);
        int f = r->fd >= 0 ? r->fd : open(r->path, O_PATH | O_CLOEXEC |
                                                       (r->follow ? 0 : O_NOFOLLOW));

        if (f < 0)
            continue; /* gone since the plan: no rule, so no access */
        allow(fd, f, access, handled, r->path);
        if (f != r->fd)
            close(f);
    }
    prepared = fd;
    prepared_handled = handled;
    return fd;
}

void ci_landlock_use(int fd)
{
    prepared = fd;
}

/*
 * A Landlock domain of our own. Being inside any domain means the kernel
 * refuses ptrace-mode access to processes outside it (the host's
 * /proc/PID/mem). The domain handles every filesystem right the ABI
 * knows and grants them only by the rules above: read-only system paths,
 * read-write session directories, nothing else; it forbids execution of
 * files everywhere, all TCP bind and connect (ABI 4+), and signals or
 * abstract unix sockets that leave it (ABI 6+). Best effort: a kernel
 * without Landlock still has the seccomp filter and the rlimits; but a
 * manifest's read rules are Landlock's, and require it. With a manifest
 * the directories that hold its search path are carved (manifest.c).
 */
static int landlock_confine(void)
{
    uint64_t handled;
    int fd;

    if (ci_manifest()) {
        /* Required: it is what keeps unlisted packages unreadable. */
        if (prepared < 0)
            ci_landlock_prepare();
        fd = prepared;
        handled = prepared_handled;
        prepared = -1;
    } else {
        fd = ruleset_create(&handled);
        if (fd < 0)
            return 0;
    }
    allow_paths(fd, handled);
    if (syscall(SYS_landlock_restrict_self, fd, 0) != 0)
        ci_fatal(CI_EXIT_LANDLOCK, "landlock_restrict_self: %s", strerror(errno));
    close(fd);
    return 1;
}

/* The user, network, IPC and UTS namespaces not in @have; returns
 * @have with the bits added. */
static uint32_t unshare_namespaces(uint32_t have)
{
    uint32_t layers = have & CI_LAYER_USERNS ? have : have | ci_unshare_user();

    /* With the capabilities the new user namespace gave us, if any. */
    return layers | ci_unshare_others(layers);
}

uint32_t ci_lockdown_zygote(pid_t parent)
{
    uint32_t layers;

    /* Out of the host's process group: a terminal's Ctrl-C is not ours.
     * Its spares share its group until they are given a session. */
    ci_own_session();
    /* Never root, no capabilities, before any module's code runs; the
     * namespaces are each child's own. */
    ci_leave_root();
    ci_drop_capabilities();
    layers = ci_check_unprivileged();
    ci_tie_to_parent(parent);
    /* Same-uid processes (the children, before their lockdown) may not
     * trace it or read its memory. */
    undumpable();
    return layers;
}

uint32_t ci_lockdown_spare(pid_t parent, int own_pidns, unsigned uid, unsigned gid)
{
    uint32_t layers;

    if (own_pidns) {
        /* The clone made our user namespace, and the PID namespace it
         * owns, of which we are pid 1 (init.c). */
        ci_map_user(uid, gid);
        return unshare_namespaces(CI_LAYER_USERNS | CI_LAYER_PIDNS);
    }
    layers = unshare_namespaces(0);
    /* After the new user namespace, which cleared the signal. */
    ci_tie_to_parent(parent);
    return layers;
}

uint32_t ci_lockdown_start(pid_t parent, uint32_t have, int zygote, const struct ci_limits *limits)
{
    uint32_t layers = have;

    ci_tie_to_parent(parent);
    if (!zygote) {
        /* Only a root worker can do these yet; it does them now so that
         * it has them even where user namespaces are forbidden. */
        layers |= ci_unshare_others(0);
        /* As root, the mount namespace belongs to the host's user
         * namespace: nothing in the worker's own can change its mounts. */
        layers |= ci_mount_root(0);
        ci_leave_root();
        layers = unshare_namespaces(layers);
    }
    layers |= ci_mount_root(layers);
    ci_drop_capabilities();
    layers |= ci_check_unprivileged();
    /* Leaving root, or a new user namespace, cleared the parent-death
     * signal (commit_creds). */
    ci_tie_to_parent(parent);
    layers |= ci_limit_tasks(layers, limits->tasks);
    layers |= ci_check_disk_quota(limits->quota_dev);
    /* What the warm-up writes (matplotlib's caches in HOME) is its
     * owner's alone too; ci_lockdown() sets it once more. Not before: the
     * directories of the new root, made as root, must stay searchable. */
    umask(077);
    return layers;
}

uint32_t ci_lockdown(pid_t parent, uint32_t have, const struct ci_limits *limits, int rollback,
                     int *listener)
{
    uint32_t layers = have | CI_LAYER_RLIMITS | CI_LAYER_NO_NEW_PRIVS | CI_LAYER_SECCOMP;

    /* Our own session: no controlling terminal, and out of the host's
     * process group and its job-control signals. */
    ci_own_session();
    /* Again, now that the slow warm-up is over: the host may have gone
     * while we imported. */
    ci_tie_to_parent(parent);
    undumpable();
    limit_signal_queue(have);
    /* Soft and hard alike, so a cell cannot raise them again. */
    limit(RLIMIT_AS, "RLIMIT_AS", (rlim_t)limits->memory);
    limit(RLIMIT_CORE, "RLIMIT_CORE", 0);
    limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", (rlim_t)limits->fsize);
    limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", 256);
    limit_cpu(limits->cpu);
    /* Everything made from here on is the owner's alone; the filter lets
     * no umask without 077 back in (seccomp.c). */
    umask(077);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        ci_fatal(CI_EXIT_NO_NEW_PRIVS, "prctl(PR_SET_NO_NEW_PRIVS): %s",
                 strerror(errno));
    if (landlock_confine())
        layers |= CI_LAYER_LANDLOCK;
    *listener = ci_seccomp_load(rollback);
    return layers; /* every other step exits the worker if it fails */
}
