"""Host functions (Session(functions=...), ci_config_add_function): a
cell calls a Python callable of the host, which gets the arguments
decoded and whose value or exception goes back to the cell."""
import threading

import pytest

import codeinterp

seen = []


def query_sales(region, *, year=2024):
    """Sales of a region.

    query_sales(region, year=2024) -> {"region": ..., "total": ...}"""
    seen.append((region, year, threading.current_thread()))
    if region == "nowhere":
        raise KeyError("no region %s" % region)
    return {"region": region, "year": year, "total": 12.5, "rows": [1, None, True]}


class WarehouseDown(Exception):
    pass


def fail():
    raise WarehouseDown("503 from the warehouse")


def not_json():
    return {1, 2}


@pytest.fixture(scope="module")
def s():
    with codeinterp.Session(timeout_ms=20_000, call_limits=(4096, 4096),
                            functions={"query_sales": query_sales, "fail": fail,
                                       "not_json": not_json, "echo": lambda *a, **k: [a, k],
                                       "slow": lambda: threading.Event().wait(1.5)}) as s:
        yield s


def test_the_callable_gets_the_arguments_and_its_value_comes_back(s):
    seen.clear()
    r = s.run("r = query_sales('EMEA', year=2023)\nr['total'], r['rows'], r['region']")
    assert r.value == "(12.5, [1, None, True], 'EMEA')"
    assert seen == [("EMEA", 2023, threading.current_thread())]
    assert s.run("echo(1, [2.5, 'x'], k={'a': None})").value == "[[1, [2.5, 'x']], {'k': {'a': None}}]"


def test_its_docstring_is_the_help(s):
    r = s.run("from codeinterp_host import query_sales as q\nhelp(q)")
    assert "Sales of a region." in r.stdout
    assert "query_sales(region, year=2024) -> {" in r.stdout


def test_its_exceptions_are_raised_in_the_cell(s):
    r = s.run("query_sales('nowhere')")
    assert (r.error.name, r.error.value) == ("KeyError", "'no region nowhere'")
    r = s.run("try:\n    fail()\nexcept HostFunctionError as e:\n"
              "    r = (e.function, e.exception_name, e.message)\nr")
    assert r.value == "('fail', 'WarehouseDown', '503 from the warehouse')"
    r = s.run("not_json()")
    assert r.error.name == "TypeError"
    assert "the host function not_json() returned a value that is not JSON" in r.error.value
    r = s.run("query_sales()")  # a TypeError of the host's own call
    assert r.error.name == "TypeError" and "region" in r.error.value


def test_what_json_cannot_hold_never_reaches_the_host(s):
    seen.clear()
    r = s.run("query_sales(float('nan'))")
    assert r.error.name == "TypeError"
    assert "the float nan is not JSON" in r.error.value
    r = s.run("query_sales('x' * 5000)")
    assert r.error.name == "ValueError" and "over the host's limit of 4 KiB" in r.error.value
    assert seen == []


def test_a_call_that_blocks_past_the_timeout(s):
    r = s.run("x = 1\nx = slow()", timeout_ms=500)
    assert r.status == codeinterp.Status.TIMEOUT
    assert r.error.name == "TimeoutError"
    assert s.run("x").value == "1"


def test_a_keyboard_interrupt_in_the_callable_interrupts_the_cell():
    def stop():
        raise KeyboardInterrupt

    with codeinterp.Session(functions={"stop": stop}) as t:
        with pytest.raises(KeyboardInterrupt):
            t.run("stop()")
        assert t.run("1 + 1").value == "2"


def test_refused_definitions():
    for name in ("print", "_x", "class", "a-b", ""):
        with pytest.raises(codeinterp.InvalidArgumentError, match="ASCII Python identifier"):
            codeinterp.Session(functions={name: fail})
    with pytest.raises(TypeError, match="must be callable"):
        codeinterp.Session(functions={"f": 3})
    with pytest.raises(codeinterp.InvalidArgumentError, match="call_limits"):
        codeinterp.Session(call_limits=(10, 4096))
