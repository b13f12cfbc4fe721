/*
 * Host functions from a hostile cell. The host defines one function,
 * lookup; its callback would also serve admin_reset, a name the host never
 * gave the session. A cell reaches the channel (descriptor 3) and the
 * worker's own _codeinterp module, so it can forge any CALL: the host must
 * run only the names it defined, and end a worker that asks for another,
 * or sends arguments it cannot take, with a clear ProtocolError.
 */
#include "attack.h"

static ci_session *S;
static int lookups, resets;

static void host(void *payload, const char *name, const char *args, size_t len, ci_reply *reply)
{
    if (!strcmp(name, "admin_reset")) {
        resets++; /* the attack's goal */
        ci_reply_json(reply, "\"reset\"", 7);
        return;
    }
    lookups++;
    ci_reply_json(reply, "{\"region\":\"EMEA\",\"total\":12}", 28);
}

static int group_setup(void **state)
{
    ci_config *cfg = ci_config_new();
    int rc;

    if (!cfg || ci_config_set_timeout_ms(cfg, 10000) != CI_OK ||
        ci_config_set_grace_ms(cfg, 500) != CI_OK ||
        ci_config_add_function(cfg, "lookup", "Sales of a region.", host, NULL) != CI_OK) {
        ci_config_free(cfg);
        return -1;
    }
    rc = ci_session_new(&S, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK) {
        fprintf(stderr, "attack setup: session: %s: %s\n", ci_strerror(rc),
                ci_session_errmsg(NULL));
        return -1;
    }
    a_group = S;
    return a_verify(S);
}

static int group_teardown(void **state)
{
    ci_session_free(S);
    return 0;
}

/* a_setup_alive() for this group's own session. */
static int setup_alive(void **state)
{
    a_alive(S);
    return 0;
}

/* Runs @code, which forges a call; asserts the host killed the worker
 * for it, saying @why, ran no callback, and that a restarted worker is
 * filtered and calls lookup as before. */
static void refused(const char *code, const char *why)
{
    int before = lookups;
    ci_result *r = h_run(S, code);

    if (ci_result_status(r) != CI_STATUS_KILLED) {
        h_dump(r);
        fail_msg("%s: the forged call was not refused\n  cell: %s",
                 ci_result_status(r) == CI_STATUS_OK ? "ATTACK SUCCEEDED" : "unexpected status",
                 code);
    }
    h_assert_str(ci_result_error_name(r), "ProtocolError");
    h_assert_contains(ci_result_error_value(r), why);
    ci_result_free(r);
    assert_int_equal(resets, 0);
    assert_int_equal(lookups, before);
    assert_int_equal(ci_session_pid(S), -1);
    a_alive(S);
    h_expect(S, "lookup('EMEA')['total']", "12", "");
}

static void test_the_worker_module_cannot_call_an_undefined_name(void **state)
{
    refused("import _codeinterp\n"
            "_codeinterp.host_call('admin_reset', b'{\"args\":[],\"kwargs\":{}}')",
            "a call of a function the host never defined");
}

static void test_a_frame_written_on_the_channel_cannot_call_an_undefined_name(void **state)
{
    char *cell = h_cells("forge_call_frame", "host_functions_forged_call_undefined");
    refused(cell, "a call of a function the host never defined");
    free(cell);
}

static void test_a_frame_written_through_ctypes_cannot_call_an_undefined_name(void **state)
{
    char *cell = h_cells("forge_call_frame", "host_functions_forged_call_by_ctypes");
    refused(cell, "a call of a function the host never defined");
    free(cell);
}

static void test_forged_arguments_the_host_cannot_take_end_the_worker(void **state)
{
    char *cell = h_cells("forge_call_frame", "host_functions_forged_call_bad_json");
    refused(cell, "a call whose arguments are not JSON");
    free(cell);
    cell = h_cells("forge_call_frame", "host_functions_forged_call_not_a_call");
    refused(cell, "a call whose arguments are not {\"args\": [...], \"kwargs\": {...}}");
    free(cell);
    /* A length that would have the host allocate a lot first. */
    cell = h_cell("host_functions_huge_frame_length");
    refused(cell, "over the size limit");
    free(cell);
}

/* A defined name is no more than the cell could call anyway: the host
 * answers it, and the cell that forged it reads its own reply. */
static void test_a_forged_call_of_a_defined_name_is_only_that_call(void **state)
{
    char *cell = h_cells("forge_call_frame", "host_functions_forged_call_answered");
    a_expect_value(S, cell, "(10, 0, b'{\"region\":\"EMEA\",\"total\":12}')", "a forged call");
    free(cell);
    assert_int_equal(resets, 0);
    h_expect(S, "lookup()['region']", "'EMEA'", "");
}

/* Values of subclasses that show the worker's check one thing and the
 * JSON encoder another (comparisons that lie, an __iter__ that hides the
 * items, str keys of the same text that are unequal): the worker sends
 * only what it checked, or refuses the call with an error the cell can
 * catch, and does not send JSON the host must take for a forgery. */
static void test_subclasses_cannot_slip_past_the_workers_check(void **state)
{
    int before = lookups, pid = ci_session_pid(S);
    char *cell = h_cell("host_functions_subclassed_arguments");
    a_expect_value(S, cell, "['TypeError', 'ValueError', 'ValueError', 12]",
                   "a subclass's value reached the host");
    free(cell);
    assert_int_equal(ci_session_pid(S), pid);
    assert_int_equal(lookups, before + 1);
    assert_int_equal(resets, 0);
}

int main(int argc, char **argv)
{
    a_main_prologue(argc, argv, 120);
#define T(f) cmocka_unit_test_setup_teardown(f, setup_alive, a_teardown)
    const struct CMUnitTest tests[] = {
        T(test_the_worker_module_cannot_call_an_undefined_name),
        T(test_a_frame_written_on_the_channel_cannot_call_an_undefined_name),
        T(test_a_frame_written_through_ctypes_cannot_call_an_undefined_name),
        T(test_forged_arguments_the_host_cannot_take_end_the_worker),
        T(test_a_forged_call_of_a_defined_name_is_only_that_call),
        T(test_subclasses_cannot_slip_past_the_workers_check),
    };
    return cmocka_run_group_tests_name("attacks: host functions", tests, group_setup,
                                       group_teardown);
}
