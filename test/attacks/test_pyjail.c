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
    attack_value("w = [c for c in ().__class__.__base__.__subclasses__()\n"
                 "     if c.__name__ == '_wrap_close'][0]\n"
                 "rc = w.__init__.__globals__['system']('touch ran_subclasses')\n"
                 "rc != 0",
                 "True", "ran_subclasses");
}

static void test_subclasses_to_catch_warnings_builtins_import(void **state)
{
    attack("cw = [c for c in object.__subclasses__() if c.__name__ == 'catch_warnings'][0]\n"
           "imp = cw()._module.__builtins__['__import__']\n"
           "imp('os').execv('/usr/bin/touch', ['touch', 'ran_catch_warnings'])",
           A_OSERR, "ran_catch_warnings");
}

static void test_subclasses_to_popen_class(void **state)
{
    attack("__import__('sub' + 'process')\n"
           "P = [c for c in object.__subclasses__() if c.__name__ == 'Popen'][0]\n"
           "P(['touch', 'ran_popen_class']).wait()",
           A_OSERR, "ran_popen_class");
}

static void test_frame_walk_to_outermost_builtins(void **state)
{
    /* Up through the worker's own frames to the outermost, whose builtins
     * give a fresh posix. */
    attack("import sys\nf = sys._getframe()\n"
           "while f.f_back is not None:\n    f = f.f_back\n"
           "posix = f.f_builtins['__import__']('posix')\n"
           "pid = posix.fork()\n"
           "if pid == 0:\n    open('ran_frames', 'w').close()\n    posix._exit(0)\n",
           A_OSERR, "ran_frames");
}

static void test_frame_globals_modules(void **state)
{
    /* Any module with a system() in any frame's globals above the cell. */
    attack_value("import sys, types\nf = sys._getframe().f_back\nrcs = []\n"
                 "while f is not None:\n"
                 "    for v in list(f.f_globals.values()):\n"
                 "        if isinstance(v, types.ModuleType) and hasattr(v, 'system'):\n"
                 "            rcs.append(v.system('touch ran_frame_globals'))\n"
                 "    f = f.f_back\n"
                 "all(rc != 0 for rc in rcs)",
                 "True", "ran_frame_globals");
}

static void test_generator_gi_frame_builtins(void **state)
{
    attack("def gen():\n    yield\n"
           "g = gen()\n"
           "b = g.gi_frame.f_builtins\n"
           "b['__import__']('os').posix_spawnp('touch', ['touch', 'ran_gi_frame'], {})",
           A_OSERR, "ran_gi_frame");
}

static void test_builtin_importer_fresh_posix(void **state)
{
    /* A second posix module made from its spec, in case the first were
     * defanged at the Python level. */
    attack("import importlib.machinery, importlib.util, sys\n"
           "spec = importlib.machinery.BuiltinImporter.find_spec('posix')\n"
           "fresh = importlib.util.module_from_spec(spec)\n"
           "spec.loader.exec_module(fresh)\n"
           "assert fresh is not sys.modules['posix']\n"
           "fresh.execv('/usr/bin/touch', ['touch', 'ran_builtin_importer'])",
           A_OSERR, "ran_builtin_importer");
}

static void test_imp_create_builtin_posix(void **state)
{
    attack_value("import _imp, importlib.machinery\n"
                 "spec = importlib.machinery.ModuleSpec('posix', "
                 "importlib.machinery.BuiltinImporter, origin='built-in')\n"
                 "p = _imp.create_builtin(spec)\n_imp.exec_builtin(p)\n"
                 "p.system('touch ran_imp') != 0",
                 "True", "ran_imp");
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
    attack_value("import io, sys\n"
                 "sys.stdin = io.StringIO(\"import os; rc = os.system('touch ran_pdb')\\nc\\n\")\n"
                 "try:\n    breakpoint()\nfinally:\n    sys.stdin = sys.__stdin__\n"
                 "rc != 0",
                 "True", "ran_pdb");
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
    attack("import io, os, pydoc, sys\n"
           "class Tty(io.StringIO):\n    def isatty(self):\n        return True\n"
           "os.environ['PAGER'] = 'touch ran_pager; cat'\nos.environ['TERM'] = 'xterm'\n"
           "saved = sys.stdin, sys.stdout, pydoc.pager\n"
           "sys.stdin, sys.stdout = Tty(), Tty()\n"
           "try:\n    pydoc.pager = pydoc.getpager()\n    help(len)\n"
           "finally:\n    sys.stdin, sys.stdout, pydoc.pager = saved\n",
           A_OSERR, "ran_pager");
}

static void test_help_interactive_ends_without_a_keyboard(void **state)
{
    int pid = ci_session_pid(S);
    a_stopped(S, "import os\nos.environ['PAGER'] = 'touch ran_help'\nhelp()\n'left help'",
              "StdinNotImplementedError");
    a_assert_no_process(S, pid, "ran_help");
}

static void test_browser_from_environment_via_antigravity(void **state)
{
    /* $BROWSER names a command webbrowser runs; importing antigravity
     * opens a page. */
    attack_value("import os, sys, webbrowser\n"
                 "os.environ['BROWSER'] = 'touch ran_browser'\n"
                 "webbrowser._tryorder = None\nwebbrowser._browsers = {}\n"
                 "sys.modules.pop('antigravity', None)\nimport antigravity\n"
                 "webbrowser.open('http://127.0.0.1:9/')",
                 "False", "ran_browser");
}

static void test_atexit_hook_runs_nothing_at_restart(void **state)
{
    /* A hook for later: the worker's end is a kill, and the next worker
     * starts clean. */
    int pid = ci_session_pid(S);
    h_expect(S,
             "import atexit, os\n"
             "atexit.register(os.system, 'touch ran_atexit')\n"
             "os.register_at_fork(before=lambda: open('ran_at_fork', 'w').close())",
             NULL, NULL);
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
