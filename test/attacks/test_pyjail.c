/*
 * The classic Python jail escapes: ways to reach os.system, fork or exec
 * that do not spell "import os". The worker has no Python-level jail to
 * break (its confinement is the kernel's), so each of these must still end
 * at a refused system call: the host finds no process and no marker file.
 */
#include "attack.h"

static ci_session *S;

static int group_setup(void **state)
{
    return a_group_session(&S, &(struct h_limits){.timeout_ms = 10000, .grace_ms = 500});
}

/* Runs @code, which must end with value @want (a failed start reported
 * as a status, as os.system does), then checks the host side. */
static void attack_value(const char *code, const char *want, const char *marker)
{
    int pid = ci_session_pid(S);
    a_expect_value(S, code, want, "a command started");
    a_assert_no_process(S, pid, marker);
}

/* Runs @code, which must be stopped with an error in @names. */
static void attack(const char *code, const char *names, const char *marker)
{
    int pid = ci_session_pid(S);
    a_stopped(S, code, names);
    a_assert_no_process(S, pid, marker);
}

static void test_subclasses_to_wrap_close_globals_system(void **state)
{
    char *cell = h_cell("pyjail_subclasses_wrap_close");
    attack_value(cell, "True", "ran_subclasses");
    free(cell);
}

static void test_subclasses_to_catch_warnings_builtins_import(void **state)
{
    char *cell = h_cell("pyjail_subclasses_catch_warnings");
    attack(cell, A_OSERR, "ran_catch_warnings");
    free(cell);
}

static void test_subclasses_to_popen_class(void **state)
{
    char *cell = h_cell("pyjail_subclasses_popen");
    attack(cell, A_OSERR, "ran_popen_class");
    free(cell);
}

static void test_frame_walk_to_outermost_builtins(void **state)
{
    /* Up through the worker's own frames to the outermost, whose builtins
     * give a fresh posix. */
    char *cell = h_cell("pyjail_frame_walk_to_outermost");
    attack(cell, A_OSERR, "ran_frames");
    free(cell);
}

static void test_frame_globals_modules(void **state)
{
    /* Any module with a system() in any frame's globals above the cell. */
    char *cell = h_cell("pyjail_frame_globals_modules");
    attack_value(cell, "True", "ran_frame_globals");
    free(cell);
}

static void test_generator_gi_frame_builtins(void **state)
{
    char *cell = h_cell("pyjail_generator_frame_builtins");
    attack(cell, A_OSERR, "ran_gi_frame");
    free(cell);
}

static void test_builtin_importer_fresh_posix(void **state)
{
    /* A second posix module made from its spec, in case the first were
     * defanged at the Python level. */
    char *cell = h_cell("pyjail_builtin_importer_fresh_posix");
    attack(cell, A_OSERR, "ran_builtin_importer");
    free(cell);
}

static void test_imp_create_builtin_posix(void **state)
{
    char *cell = h_cell("pyjail_imp_create_builtin_posix");
    attack_value(cell, "True", "ran_imp");
    free(cell);
}

static void test_libc_system_through_ctypes(void **state)
{
    attack_value("import ctypes\n"
                 "ctypes.CDLL(None).system(b'touch ran_libc_system') != 0",
                 "True", "ran_libc_system");
}

static void test_breakpoint_runs_a_scripted_debugger_command(void **state)
{
    /* pdb reads its commands from sys.stdin: the cell scripts it. */
    char *cell = h_cell("pyjail_breakpoint_scripted");
    attack_value(cell, "True", "ran_pdb");
    free(cell);
}

static void test_breakpoint_without_a_keyboard_ends(void **state)
{
    /* No one types (the worker's stdin is /dev/null, and input() asks a
     * host that does not answer): the debugger stops at once, no hang. */
    int pid = ci_session_pid(S);
    a_stopped(S, "breakpoint()\nx = 1", "StdinNotImplementedError");
    a_assert_no_process(S, pid, NULL);
}

static void test_help_through_a_forced_pager(void **state)
{
    /* pydoc pipes help text through $PAGER when it believes it has a
     * terminal: the cell makes it believe so. */
    char *cell = h_cell("pyjail_help_forced_pager");
    attack(cell, A_OSERR, "ran_pager");
    free(cell);
}

static void test_help_interactive_ends_without_a_keyboard(void **state)
{
    int pid = ci_session_pid(S);
    char *cell = h_cell("pyjail_help_interactive");
    a_stopped(S, cell, "StdinNotImplementedError");
    free(cell);
    a_assert_no_process(S, pid, "ran_help");
}

static void test_browser_from_environment_via_antigravity(void **state)
{
    char *cell = h_cell("pyjail_browser_via_antigravity");
    /* $BROWSER names a command webbrowser runs; importing antigravity
     * opens a page. */
    attack_value(cell, "False", "ran_browser");
    free(cell);
}

static void test_atexit_hook_runs_nothing_at_restart(void **state)
{
    /* A hook for later: the worker's end is a kill, and the next worker
     * starts clean. */
    int pid = ci_session_pid(S);
    h_expect_cell(S, "pyjail_atexit_and_at_fork_hooks", NULL, NULL);
    assert_int_equal(ci_session_restart(S), CI_OK);
    a_assert_filtered(S);
    a_assert_no_process(S, pid, "ran_atexit");
    a_assert_no_process(S, pid, "ran_at_fork");
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
    const struct CMUnitTest tests[] = {
        A_TEST(test_subclasses_to_wrap_close_globals_system),
        A_TEST(test_subclasses_to_catch_warnings_builtins_import),
        A_TEST(test_subclasses_to_popen_class),
        A_TEST(test_frame_walk_to_outermost_builtins),
        A_TEST(test_frame_globals_modules),
        A_TEST(test_generator_gi_frame_builtins),
        A_TEST(test_builtin_importer_fresh_posix),
        A_TEST(test_imp_create_builtin_posix),
        A_TEST(test_libc_system_through_ctypes),
        A_TEST(test_breakpoint_runs_a_scripted_debugger_command),
        A_TEST(test_breakpoint_without_a_keyboard_ends),
        A_TEST(test_help_through_a_forced_pager),
        A_TEST(test_help_interactive_ends_without_a_keyboard),
        A_TEST(test_browser_from_environment_via_antigravity),
        A_TEST(test_atexit_hook_runs_nothing_at_restart),
    };
    return cmocka_run_group_tests_name("attacks: python jail escapes", tests, group_setup,
                                       h_group_teardown);
}
