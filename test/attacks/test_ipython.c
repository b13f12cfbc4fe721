/*
 * The IPython layer (lib/worker/shell.py, runner.py, outputs.py,
 * stdin.py): process creation through IPython's own paths with the
 * Python-level refusals bypassed, IPython writing outside the session,
 * and forged or tampered protocol data from a cell. Each must end at the
 * kernel's refusal, or at the host killing the worker as a ProtocolError
 * within its limits; none may start a process or leave a file behind.
 */
#include "attack.h"

static ci_session *S;

static int group_setup(void **state)
{
    return a_group_session(&S, &(struct h_limits){.timeout_ms = 5000, .grace_ms = 500});
}

static void attack(const char *code, const char *names, const char *marker)
{
    int pid = ci_session_pid(S);
    a_stopped(S, code, names);
    a_assert_no_process(S, pid, marker);
    /* The shell and the refusals a cell changed stay changed: start the
     * next attack on a fresh worker. */
    assert_int_equal(ci_session_restart(S), CI_OK);
    a_assert_filtered(S);
}

/* attack() of @code after the cell ipython_no_audit: the audit hook's
 * process refusal switched off (a cell may rewrite the module the hook
 * reads), so only seccomp and Landlock stand; IS is InteractiveShell and
 * ip the shell. */
static void attack_no_audit(const char *code, const char *names, const char *marker)
{
    a_cell = h_cell_then("ipython_no_audit", code);
    attack(a_cell, names, marker);
}

/* Runs @code, which must make the host kill the worker as a ProtocolError
 * (never a hang, never a result); the session is then restarted. */
static void protocol_error(const char *code)
{
    ci_result *r = h_run(S, code);
    const char *n = ci_result_error_name(r);
    if (ci_result_status(r) != CI_STATUS_KILLED || !n || strcmp(n, "ProtocolError") != 0) {
        h_dump(r);
        fail_msg("ATTACK SUCCEEDED: forged protocol data was not refused\n  cell: %s", code);
    }
    assert_true(ci_result_wall_time_us(r) < 4000 * 1000ull); /* not the timeout */
    ci_result_free(r);
    assert_int_equal(ci_session_pid(S), -1);
    a_alive(S);
}

static void test_original_system_raw(void **state)
{
    attack_no_audit("IS.system_raw(ip, 'touch ran_system_raw')", A_OSERR, "ran_system_raw");
}

static void test_original_getoutput(void **state)
{
    attack_no_audit("IS.getoutput(ip, 'touch ran_getoutput')", A_OSERR, "ran_getoutput");
}

static void test_original_system_piped_for_bang(void **state)
{
    attack_no_audit("ip.system = IS.system_piped.__get__(ip)\n!touch ran_bang\n", A_OSERR,
           "ran_bang");
}

static void test_original_script_magic(void **state)
{
    attack_no_audit("from IPython.core.magics.script import ScriptMagics\n"
                    "ScriptMagics(shell=ip).shebang('bash', 'touch ran_script')",
           A_OSERR, "ran_script");
}

static void test_ipython_utils_process_system(void **state)
{
    attack_no_audit("from IPython.utils.process import system\n"
                    "rc = system('touch ran_utils_system')\n"
                    "raise OSError(rc) if rc else None",
           A_OSERR, "ran_utils_system");
}

static void test_alias_and_rehashx(void **state)
{
    attack("%alias evil touch ran_alias\n%evil", "PermissionError", "ran_alias");
    attack("%rehashx\n%touch ran_rehashx", "PermissionError|UsageError", "ran_rehashx");
}

/* IPython's file-writing magics aimed at a directory any uid may write:
 * only the sandbox keeps the file out. */
static void test_magics_write_outside(void **state)
{
    /* Landlock refuses it; it is not in the worker's mount namespace. */
    h_require_layer(S, CI_SANDBOX_LANDLOCK | CI_SANDBOX_MNTNS);
    char *dir = a_tmpdir(0777);
    static const char *cells[] = {
        "%%%%writefile %s/wf\nx\n", "%%logstart %s/log.py\n", "%%history -f %s/hist\n",
        "%%save %s/save 0\n",
    };
    for (size_t i = 0; i < sizeof cells / sizeof *cells; i++) {
        a_cell = h_fmt(cells[i], dir);
        ci_result_free(h_run(S, a_cell));
        free(a_cell);
        a_cell = NULL;
        a_alive(S);
    }
    static const char *names[] = {"wf", "log.py", "hist", "save"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *p = h_fmt("%s/%s", dir, names[i]);
        a_assert_absent(p);
        free(p);
    }
    h_rmtree(dir);
    free(dir);
}

/* %cd around the sandbox's version: the cwd moves, the files do not open. */
static void test_cd_around_the_refusal(void **state)
{
    /* The modes keep the worker's uid out of /etc/shadow, unless that uid
     * owns it (a bubblewrap root whose one uid maps to root's); then
     * Landlock, or the mount namespace, which leaves it out. */
    if (!h_open_by_the_workers_uid("/etc/shadow", O_RDONLY) ||
        h_has_layer(S, CI_SANDBOX_LANDLOCK | CI_SANDBOX_MNTNS, "the refused read of /etc/shadow"))
        a_stopped(S, "get_ipython().magics_manager.registry['OSMagics'].cd('/etc')\n"
                     "open('shadow').read()",
                  A_OSERR);
    else
        h_expect(S, "get_ipython().magics_manager.registry['OSMagics'].cd('/etc')", NULL, NULL);
    h_expect(S, "%cd\nimport os; os.getcwd() == get_ipython().workspace", "True", NULL);
}

/* protocol_error() of @code after the cell ipython_frame, which defines
 * fr(type, payload), a frame written to the worker's channel, fld(tag,
 * bytes), a field, u32(x), and n, this cell's execution count. */
static void forged(const char *code)
{
    char *cell = h_cell_then("ipython_frame", code);
    protocol_error(cell);
    free(cell);
}

static void test_forged_frames(void **state)
{
    /* An input request in a run without on_input. */
    forged("fr(6, u32(0) + b'forged')\nimport time; time.sleep(2)");
    /* A result whose value is not UTF-8 without NUL. */
    forged("fr(3, fld(1, u32(0)) + fld(7, u32(n)) + fld(2, b'\\xff\\x00'))\n"
           "import time; time.sleep(2)");
    /* A header promising 4 GiB. */
    forged("os.write(3, struct.pack('=II', 3, 0xFFFFFFFF))\n"
           "import time; time.sleep(2)");
    /* An OUTPUTS field with a truncated output header. */
    forged("fr(3, fld(1, u32(0)) + fld(7, u32(n)) + fld(8, bytes(23)))\n"
           "import time; time.sleep(2)");
}

/* The worker's own limits raised from the cell: the host keeps its own. */
static void test_tampered_display_limits(void **state)
{
    protocol_error("import _codeinterp_outputs as o\n"
                   "o._limits['output'] = o._limits['run'] = 1 << 40\n"
                   "display({'image/png': bytes(20 << 20)}, raw=True)");
    protocol_error("import _codeinterp_outputs as o\n"
                   "o.emit(o.DISPLAY_DATA, [(b'text/plain', b'a\\x00b\\xff')], 0)");
    protocol_error("import _codeinterp_outputs as o\n"
                   "o.emit(o.DISPLAY_DATA, [(b'text/plain', b'a')], 0, b'\\xff')");
}

static void test_clear_output_flood(void **state)
{
    ci_result *r = h_run(S, "from IPython.display import clear_output\n"
                            "for i in range(20000): clear_output(wait=True)");
    assert_int_equal(ci_result_status(r), CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), CI_MAX_OUTPUTS);
    assert_int_equal(ci_result_outputs_omitted(r), 20000 - CI_MAX_OUTPUTS);
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_OUTPUTS);
    ci_result_free(r);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 180);
    const struct CMUnitTest tests[] = {
        A_TEST(test_original_system_raw),
        A_TEST(test_original_getoutput),
        A_TEST(test_original_system_piped_for_bang),
        A_TEST(test_original_script_magic),
        A_TEST(test_ipython_utils_process_system),
        A_TEST(test_alias_and_rehashx),
        A_TEST(test_magics_write_outside),
        A_TEST(test_cd_around_the_refusal),
        A_TEST(test_forged_frames),
        A_TEST(test_tampered_display_limits),
        A_TEST(test_clear_output_flood),
    };
    return cmocka_run_group_tests_name("attacks: the IPython layer", tests, group_setup,
                                       h_group_teardown);
}
