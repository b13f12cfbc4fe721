/*
 * Crashing the worker on purpose: a NULL read, recursion with the limit
 * lifted (in Python and through C), bytecode and marshal data made up by
 * the cell, a corrupted object, an abort, a fault on another thread. Each
 * must end with a clear status (an exception, or KILLED WorkerDied naming
 * the signal), leave no core file, leave the host alive, and the session
 * must go on or restart cleanly.
 */
#include "attack.h"

static ci_session *S;
static char *root; /* workspace root, test-owned */

static int group_setup(void **state)
{
    root = a_tmpdir(0755);
    return a_group_session(&S, &(struct h_limits){.root = root, .timeout_ms = 3000,
                                                  .grace_ms = 500});
}

static int group_teardown(void **state)
{
    h_group_teardown(state);
    h_rmtree(root);
    free(root);
    return 0;
}

/* Asserts the session directory holds no core dump: RLIMIT_CORE is 0 and
 * the worker is not dumpable. */
static void assert_no_core_file(void)
{
    const char *ws = ci_session_workspace(S);
    char *dirs[] = {h_fmt("%s", ws), h_fmt("%.*s", (int)(strrchr(ws, '/') - ws), ws)};
    for (int i = 0; i < 2; i++) {
        DIR *d = opendir(dirs[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            if (strncmp(e->d_name, "core", 4) == 0)
                fail_msg("a core file %s/%s was left", dirs[i], e->d_name);
        if (d)
            closedir(d);
        free(dirs[i]);
    }
}

/* Other outcomes a crash test may accept. */
enum {
    ALLOW_OK = 1,      /* garbage in, garbage out: the cell ran on */
    ALLOW_TIMEOUT = 2, /* took longer than the timeout: TIMEOUT, or KILLED
                          "TimeoutError" after the grace period */
};

/*
 * Runs @code, which crashes the worker or raises. Accepts CI_STATUS_ERROR
 * (or MEMORY) with an exception named in @errors, after which the session
 * goes on; or CI_STATUS_KILLED "WorkerDied" whose message names one of
 * the signals in @signals ('|'-separated, e.g. "SIGSEGV|signal 11"), after
 * which the worker must be gone and a restart must give a working,
 * filtered session; or what @allow adds.
 */
static void crash(const char *code, const char *errors, const char *signals, int allow)
{
    int pid = ci_session_pid(S);
    ci_result *r = h_run(S, code);
    ci_status st = ci_result_status(r);
    const char *n = ci_result_error_name(r), *v = ci_result_error_value(r);
    if (((st == CI_STATUS_ERROR || st == CI_STATUS_MEMORY) && n && errors &&
         a_name_in(n, errors)) ||
        (st == CI_STATUS_OK && (allow & ALLOW_OK)) ||
        (st == CI_STATUS_TIMEOUT && (allow & ALLOW_TIMEOUT))) {
        ci_result_free(r);
        a_assert_continues(S, pid);
        return;
    }
    int killed = st == CI_STATUS_KILLED && n && v;
    int died = killed && strcmp(n, "WorkerDied") == 0 && signals;
    if (died) {
        int named = 0;
        char *list = h_fmt("%s", signals);
        for (char *save, *t = strtok_r(list, "|", &save); t; t = strtok_r(NULL, "|", &save))
            named |= strstr(v, t) != NULL;
        free(list);
        if (!named) {
            h_dump(r);
            fail_msg("the worker died, but \"%s\" names none of %s", v, signals);
        }
    }
    if (died || (killed && strcmp(n, "TimeoutError") == 0 && (allow & ALLOW_TIMEOUT))) {
        ci_result_free(r);
        assert_int_equal(ci_session_pid(S), -1);
        /* Reaped, by the library's reaper if it was slow to die. */
        if (!h_wait_reaped(pid, 10000))
            fail_msg("worker %d not reaped 10 s after its death was reported", pid);
        assert_no_core_file();
        a_alive(S);
        h_expect(S, "'restarted'", "'restarted'", NULL);
        return;
    }
    h_dump(r);
    fail_msg("the crash ended with %s %s, expected an error in {%s} or WorkerDied by {%s}",
             h_status_name(st), n ? n : "(none)", errors ? errors : "", signals ? signals : "");
}

#define SEGV "SIGSEGV|signal 11|SIGBUS|signal 7"

static void test_read_of_address_zero(void **state)
{
    crash("import ctypes\nctypes.string_at(0)", NULL, SEGV, 0);
}

static void test_python_recursion_with_the_limit_lifted(void **state)
{
    /* Python 3.11 keeps Python frames off the C stack: a million of them
     * end in RecursionError, or run into the timeout while they unwind
     * and are reported. */
    a_cell = h_cell("crashes_python_recursion");
    crash(a_cell, "RecursionError|MemoryError", SEGV, ALLOW_TIMEOUT);
}

static void test_recursion_through_c_with_the_limit_lifted(void **state)
{
    /* Each level passes through map() and list(), in C, on the C stack. */
    a_cell = h_cell("crashes_recursion_through_c");
    crash(a_cell, "RecursionError|MemoryError", SEGV, ALLOW_TIMEOUT);
}

static void test_code_object_with_an_unknown_opcode(void **state)
{
    crash("code = (lambda: 0).__code__.replace(co_code=bytes([0xfe, 0]) * 4)\n"
          "exec(code)",
          "SystemError|ValueError|TypeError", SEGV "|SIGILL|signal 4|SIGABRT|signal 6", 0);
}

static void test_code_object_loading_a_constant_out_of_range(void **state)
{
    /* LOAD_CONST 200 with one constant, then RETURN_VALUE: a read past
     * co_consts that the interpreter does not check. What it finds there
     * may even pass for an object: the session must go on either way. */
    a_cell = h_cell("crashes_load_const_out_of_range");
    crash(a_cell, "SystemError|ValueError|TypeError", SEGV "|SIGABRT|signal 6", ALLOW_OK);
}

static void test_marshal_of_garbage(void **state)
{
    /* Fixed garbage (seeded), and code objects cut short: exceptions,
     * whatever the bytes. The 33rd blob of this seed makes marshal
     * allocate a huge object, which took 0.1 to 2.7 s from run to run and
     * ran the cell past its timeout: 90 inputs stop before it. */
    a_cell = h_cell("crashes_marshal_of_garbage");
    crash(a_cell, "ValueError", SEGV "|SIGABRT|signal 6", 0);
}

static void test_corrupted_object_type_pointer(void **state)
{
    /* ob_type of a fresh object set to NULL, then the object used. */
    a_cell = h_cell("crashes_corrupted_object_type_pointer");
    crash(a_cell, NULL, SEGV, 0);
}

static void test_abort_leaves_no_core(void **state)
{
    crash("import os\nos.abort()", NULL, "SIGABRT|signal 6", 0);
}

static void test_fault_on_another_thread(void **state)
{
    crash("import ctypes, threading, time\n"
          "threading.Thread(target=ctypes.string_at, args=(0,)).start()\n"
          "time.sleep(2)",
          NULL, SEGV, 0);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    const struct CMUnitTest tests[] = {
        A_TEST(test_read_of_address_zero),
        A_TEST(test_python_recursion_with_the_limit_lifted),
        A_TEST(test_recursion_through_c_with_the_limit_lifted),
        A_TEST(test_code_object_with_an_unknown_opcode),
        A_TEST(test_code_object_loading_a_constant_out_of_range),
        A_TEST(test_marshal_of_garbage),
        A_TEST(test_corrupted_object_type_pointer),
        A_TEST(test_abort_leaves_no_core),
        A_TEST(test_fault_on_another_thread),
    };
    return cmocka_run_group_tests_name("attacks: crashes", tests, group_setup, group_teardown);
}
