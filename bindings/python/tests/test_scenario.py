"""The shared scenario (test/scenario/steps.json, docs/testing.md): one
session taken through the steps the C library's, the Go and the Rust
tests take too. The expected values are the data file's; this file only
maps each step kind to the Python API."""

import json
import os

import pytest

import codeinterp

STEPS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "..", "..", "test", "scenario", "steps.json")


def seen(result):
    """The result in the data file's terms, each key as an expect key."""
    error = result.error
    return {
        "status": str(result.status),
        "execution_count": result.execution_count,
        "stdout": result.stdout_bytes,
        "value": result.value,
        "error_name": error.name if error else None,
        "error_value": error.value if error else None,
        "outputs": [(o.mime, o.type, o.data) for o in result.outputs],
        "files": result.files,
    }


def check_output(i, want, got):
    mime, kind, data = got
    assert mime == want["mime"], "output %d: mime %r, expected %r" % (i, mime, want["mime"])
    assert kind == want["type"], "output %d: type %r, expected %r" % (i, kind, want["type"])
    if "text" in want:
        assert data == want["text"].encode(), "output %d: %r, expected %r" % (i, data, want["text"])
    if "contains" in want:
        assert want["contains"].encode() in data, \
            "output %d: %r does not contain %r" % (i, data[:200], want["contains"])
    if "prefix_hex" in want:
        prefix = bytes.fromhex(want["prefix_hex"])
        assert data.startswith(prefix), "output %d starts %r, expected %r" % (i, data[:16], prefix)


def check_run(expect, result):
    got = seen(result)
    for key, want in expect.items():
        if key == "stdout":
            assert got["stdout"] == want.encode(), "stdout %r, expected %r" % (got["stdout"], want)
        elif key == "traceback_contains":
            traceback = (result.error.traceback or "") if result.error else ""
            for part in want:
                assert part in traceback, "traceback does not contain %r:\n%s" % (part, traceback)
        elif key == "outputs":
            assert len(got["outputs"]) == len(want), \
                "%d outputs %r, expected %d" % (len(got["outputs"]), [o[:2] for o in got["outputs"]],
                                                len(want))
            for i, (w, g) in enumerate(zip(want, got["outputs"])):
                check_output(i, w, g)
        elif key in got:
            assert got[key] == want, "%s %r, expected %r (%r)" % (key, got[key], want, result)
        else:
            raise AssertionError("unknown expect key %r" % key)


def do_step(session, step):
    kind = step["kind"]
    assert not session.closed, "the session is closed"
    if kind == "put_file":
        session.put_file(step["name"], step["text"].encode())
    elif kind == "run":
        result = session.run(step["code"], timeout_ms=step.get("timeout_ms"))
        check_run(step["expect"], result)
    elif kind == "get_file":
        data = session.get_file(step["name"])
        assert data == step["text"].encode(), "%r, expected %r" % (data, step["text"])
    elif kind == "restart":
        session.restart()
    elif kind == "close":
        session.close()
        assert session.closed
    else:
        raise AssertionError("unknown step kind %r" % kind)


def test_scenario():
    with open(STEPS_FILE, encoding="utf-8") as f:
        scenario = json.load(f)
    session = codeinterp.Session(timeout_ms=scenario["session"]["timeout_ms"])
    try:
        for n, step in enumerate(scenario["steps"], 1):
            try:
                do_step(session, step)
            except (AssertionError, codeinterp.CodeinterpError) as e:
                pytest.fail("scenario step %d (%s, %s): %s" % (n, step["kind"], step["step"], e),
                            pytrace=False)
    finally:
        session.close()
