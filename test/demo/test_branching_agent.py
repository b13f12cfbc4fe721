"""examples/branching_agent.c, checked from outside the sandbox.

Each alternative runs in a branch of one session; the scores it prints
must be what the same cells give in plain Python here, the branch kept
the one with the lowest, and its report the kept model's own forecast.
"""
import os
import re
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CELLS = os.path.join(TOP, 'examples', 'branching')
DATA = os.path.join(TOP, 'examples', 'data', 'macrodata.csv')
BUILD = os.path.join(TOP, os.environ.get('BUILD', 'build'))
TRIES = ['try_ar.py', 'try_naive.py', 'try_trend.py']


@pytest.fixture(scope='module')
def output():
    run = subprocess.run([os.path.join(BUILD, 'branching_agent'), CELLS, DATA],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr
    return run.stdout


def plain(*names):
    """The namespace of the cells @names run in plain Python, in the data's
    directory."""
    ns = {}
    here = os.getcwd()
    os.chdir(os.path.dirname(DATA))
    try:
        for name in names:
            with open(os.path.join(CELLS, name)) as f:
                exec(compile(f.read(), name, 'exec'), ns)
    finally:
        os.chdir(here)
    return ns


def test_each_alternative_scores_as_in_plain_python(output):
    scores = dict(re.findall(r'^score of (\S+): (\S+)$', output, re.M))
    assert sorted(scores) == TRIES
    for name in TRIES:
        assert float(scores[name]) == pytest.approx(plain('load.py', name)['score'], rel=1e-12)


def test_the_lowest_score_is_kept_and_reports_its_own_model(output):
    scores = {name: plain('load.py', name)['score'] for name in TRIES}
    best = min(scores, key=scores.get)
    assert re.search(r'^best: (\S+)$', output, re.M).group(1) == best
    ns = plain('load.py', best)
    assert f"kept: {ns['name']}, mean absolute error {ns['score']:.4f} points" in output
    assert f"forecast for the quarter after the data: {ns['model'](ns['unemp']):.2f}%" in output
    assert re.findall(r'^== (\S+) \((\w+)\)$', output, re.M) == [
        ('load.py', 'ok')] + [(t, 'ok') for t in TRIES] + [('report.py', 'ok')]
