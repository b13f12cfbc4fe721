/*
 * What the worker could carry over from its host: memory and descriptors.
 * Before the session starts the test puts a secret in its heap (and has a
 * secret in its initial environment and command line), and opens
 * inheritable canary descriptors of every kind, some at high numbers. The
 * cell scans its whole memory and environment for the secrets and probes
 * every descriptor number; it must find none of them. Each scan also
 * looks for a control secret the cell plants itself, so a scan that
 * cannot see anything fails instead of passing.
 */
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "attack.h"

static ci_session *S;
static char *dir;    /* test-owned, 0755 */
static char *canary; /* 0644 in dir */
static const char *argv_secret;
static int canary_fds[16];
static int n_canary_fds;

/* Keeps @fd as a canary, and a copy of it at @high when @high > 0. */
static int keep(int fd, int high)
{
    if (fd < 0)
        return -1;
    canary_fds[n_canary_fds++] = fd;
    if (high > 0) {
        if (dup2(fd, high) != high) /* dup2 leaves close-on-exec off */
            return -1;
        canary_fds[n_canary_fds++] = high;
    }
    return 0;
}

static int group_setup(void **state)
{
    a_plant_heap_secret();
    dir = a_tmpdir(0755);
    canary = a_canary(dir, "fd-canary", 0644);
    /* Every one inheritable on purpose: no O_CLOEXEC anywhere. */
    int p[2], sp[2];
    if (pipe(p) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
        return -1;
    int mfd = memfd_create("ci-attack-canary", 0);
    if (mfd < 0 || write(mfd, a_heap_secret_copy, strlen(a_heap_secret_copy)) < 0)
        return -1;
    if (keep(open(canary, O_RDONLY), 1023) || keep(open(dir, O_RDONLY | O_DIRECTORY), 700) ||
        keep(p[0], 0) || keep(p[1], 256) || keep(sp[0], 255) || keep(sp[1], 0) ||
        keep(eventfd(0, 0), 0) || keep(mfd, 100))
        return -1;
    return a_group_session(&S, NULL);
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    a_free_heap_secret();
    for (int i = 0; i < n_canary_fds; i++)
        close(canary_fds[i]);
    h_rmtree(dir);
    free(canary);
    free(dir);
    return 0;
}

/* ---------------------------------------------------------- descriptors */

static void test_fstat_of_every_number_finds_only_0_to_3(void **state)
{
    char *cell = h_cell("memory_fds_fstat_every_number");
    a_expect_value(S, cell, "[0, 1, 2, 3]", "the worker holds descriptors the host opened");
    free(cell);
}

static void test_fcntl_of_every_number_finds_only_0_to_3(void **state)
{
    char *cell = h_cell("memory_fds_fcntl_every_number");
    a_expect_value(S, cell, "[0, 1, 2, 3]", "the worker holds descriptors the host opened");
    free(cell);
}

static void test_openat_through_an_inherited_directory(void **state)
{
    /* A directory descriptor leaked from the host would be a way out of
     * any path rule: openat(fd, "canary"). */
    char *cell = h_cell("memory_fds_openat_inherited_dir");
    a_expect_value(S, cell, "[]", "a file outside opened relative to an inherited descriptor");
    free(cell);
}

static void test_read_from_the_hosts_descriptor_numbers(void **state)
{
    char list[256] = "";
    for (int i = 0; i < n_canary_fds; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%d, ", canary_fds[i]);
    char *cell = h_cell("memory_fds_read_host_numbers");
    a_cell = h_fmt("FDS = [%s]\n%s", list, cell);
    free(cell);
    a_expect_value(S, a_cell, "[]", "read from a descriptor number the host holds");
}

static void test_worker_descriptors_seen_from_the_host(void **state)
{
    /* No cell: the host lists the worker's descriptors itself. */
    char *path = h_fmt("/proc/%d/fd", ci_session_pid(S));
    DIR *d = opendir(path);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        int fd = atoi(e->d_name);
        char *lp = h_fmt("%s/%s", path, e->d_name);
        char target[512] = "";
        ssize_t len = readlink(lp, target, sizeof target - 1);
        if (len > 0)
            target[len] = '\0';
        if (fd > 3 || strstr(target, canary) || strstr(target, "ci-attack-canary"))
            fail_msg("ATTACK SUCCEEDED: the worker holds descriptor %d -> %s", fd, target);
        free(lp);
        n++;
    }
    closedir(d);
    free(path);
    assert_int_equal(n, 4);
}

/* --------------------------------------------------------------- memory */

/* The Python list of the pairs to look for: the heap, environment and
 * argument secrets, then a control the cell plants. */
static char *pairs(char **control)
{
    char ctl[40] = "ci-control-";
    a_random_hex(ctl + strlen(ctl), 8);
    char *h = a_py_pair(a_heap_secret_copy), *e = a_py_pair(getenv(A_ENV_NAME)),
         *a = a_py_pair(argv_secret), *c = a_py_pair(ctl);
    char *out = h_fmt("[%s, %s, %s, %s]", h, e, a, c);
    *control = h_fmt("%s", c);
    free(h);
    free(e);
    free(a);
    free(c);
    return out;
}

/* Runs scan cell @cell, whose value is (found, scanned enough) with found
 * the heap, environment, argument and control pairs, or @alt (NULL: none)
 * when the scan could not run at all. A secret found is an attack that
 * worked; a control not found (or too little scanned) is a broken scan. */
static void expect_scan(const char *cell, const char *alt)
{
    static const char *const clean = "([False, False, False, True], True)";
    ci_result *r = h_run(S, cell);
    const char *v = ci_result_value(r);
    if (ci_result_status(r) == CI_STATUS_OK && v && (!strcmp(v, clean) || (alt && !strcmp(v, alt)))) {
        ci_result_free(r);
        return;
    }
    h_dump(r);
    if (v && strncmp(v, "([False, False, False, ", 23) != 0 && v[0] == '(')
        fail_msg("ATTACK SUCCEEDED: a host secret is in the worker's memory: %s "
                 "(heap, environment, argument, control)",
                 v);
    fail_msg("the scan is broken: value %s, expected %s (the cell's own control found, "
             "over 50 MiB scanned)",
             v ? v : "(null)", clean);
}

/* The scan cell @name after the cell has, a line PAIRS = @pairs and
 * memory_readable_regions; malloc'ed. */
static char *scan_cell(const char *name, const char *pairs)
{
    char *has = h_cell("has"), *cell = h_cells("memory_readable_regions", name);
    char *code = h_fmt("%s\nPAIRS = %s\n%s", has, pairs, cell);
    free(cell);
    free(has);
    return code;
}

static void test_scan_of_every_readable_mapping(void **state)
{
    /* Every readable mapping, copied out with memmove into one buffer
     * allocated up front, so the scan itself allocates (and frees) next
     * to nothing. Before each chunk, write(2) of its last byte into a pipe
     * checks it is still mapped and not past the end of a mapped file:
     * the kernel answers EFAULT where a plain read would fault. */
    char *control, *p = pairs(&control);
    a_cell = scan_cell("memory_scan_mappings", p);
    expect_scan(a_cell, NULL);
    free(p);
    free(control);
}

static void test_scan_of_own_memory_through_proc_self_mem(void **state)
{
    /* A worker that is not dumpable and not root cannot open its own
     * mem: nothing to find that way ('unreadable'). */
    char *control, *p = pairs(&control);
    a_cell = scan_cell("memory_scan_proc_self_mem", p);
    expect_scan(a_cell, "'unreadable'");
    free(p);
    free(control);
}

static void test_environment_in_every_form(void **state)
{
    char *e = a_py_pair(getenv(A_ENV_NAME)), *n = a_py_pair(A_ENV_NAME),
         *a = a_py_pair(argv_secret);
    char *has = h_cell("has"), *cell = h_cell("memory_environment_forms");
    a_cell = h_fmt("%s\nENV_PAIR = %s\nNAME_PAIR = %s\nARG_PAIR = %s\n%s", has, e, n, a, cell);
    free(cell);
    free(has);
    a_expect_value(S, a_cell, "[False, False, False, False, False, False, False, False, False, "
                            "False, False, False, False, False, False]",
                   "a host secret is in the worker's environment or arguments");
    free(e);
    free(n);
    free(a);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    argv_secret = a_argv_secret(argc, argv);
    /* The descriptor probes first, before any cell opens files. */
    const struct CMUnitTest tests[] = {
        A_TEST(test_worker_descriptors_seen_from_the_host),
        A_TEST(test_fstat_of_every_number_finds_only_0_to_3),
        A_TEST(test_fcntl_of_every_number_finds_only_0_to_3),
        A_TEST(test_openat_through_an_inherited_directory),
        A_TEST(test_read_from_the_hosts_descriptor_numbers),
        A_TEST(test_scan_of_every_readable_mapping),
        A_TEST(test_scan_of_own_memory_through_proc_self_mem),
        A_TEST(test_environment_in_every_form),
    };
    return cmocka_run_group_tests_name("attacks: host memory and descriptors", tests,
                                       group_setup, group_teardown);
}
