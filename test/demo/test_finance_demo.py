"""make demo's finance job, checked from outside the sandbox.

The sample data must be what examples/data/make_finance_data.py writes,
byte for byte, and the figures the demo's cells report (in the session,
through build/scripted_agent) must be those that plain pandas computes
here from the same files, in a way of its own: from the ledger's signs
(credits negative) rather than the cells' account types.
"""
import filecmp
import glob
import json
import os
import subprocess
import sys

import openpyxl
import pandas as pd
import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
DATA = os.path.join(TOP, 'examples', 'data')
BUILD = os.path.join(TOP, os.environ.get('BUILD', 'build'))
ACTUALS = sorted(glob.glob(os.path.join(DATA, 'gl_actuals_*.csv')))
BUDGET = os.path.join(DATA, 'budget_2025.csv')
CHARTS = ['chart_department_variance.png', 'chart_profit_bridge.png',
          'chart_quarterly_trend.png']


def test_generator_writes_the_committed_files(tmp_path):
    subprocess.run([sys.executable, os.path.join(DATA, 'make_finance_data.py'), str(tmp_path)],
                   check=True)
    written = sorted(os.listdir(tmp_path))
    assert written == [os.path.basename(p) for p in [BUDGET] + ACTUALS]
    assert len(ACTUALS) == 4
    for name in written:
        assert filecmp.cmp(tmp_path / name, os.path.join(DATA, name), shallow=False), name


@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp('demo')
    run = subprocess.run([os.path.join(BUILD, 'scripted_agent'),
                          os.path.join(TOP, 'examples', 'variance'), str(out)] + ACTUALS + [BUDGET],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr
    return out, run.stdout


def expected():
    """Operating profit and the biggest line variance, by plain pandas."""
    gl = pd.concat([pd.read_csv(p) for p in ACTUALS])
    month = gl['period'].str[5:7].astype(int)
    gl['quarter'] = gl['period'].str[:4] + 'Q' + ((month - 1) // 3 + 1).astype(str)
    # Credits (revenue) are negative in the ledger, debits (cost) positive,
    # so a line's contribution to profit is minus its amount.
    actual = -gl.groupby(['quarter', 'department', 'account'])['amount'].sum()
    b = pd.read_csv(BUDGET)
    sign = b['account_type'].map({'revenue': 1, 'cost': -1})
    quarters = [c for c in b.columns if 'Q' in c]
    budget = (b[quarters].mul(sign, axis=0).set_index([b['department'], b['account']])
              .stack().swaplevel(0, 2).swaplevel(1, 2).sort_index())
    budget.index.names = actual.index.names
    effect = actual - budget
    assert not effect.isna().any()
    key = effect.abs().idxmax()
    kind = b.set_index(['department', 'account'])['account_type'][key[1:]]
    return {'actual': actual.sum(), 'budget': budget.sum(), 'key': key,
            'variance': effect[key] * (1 if kind == 'revenue' else -1),
            'direction': 'F' if effect[key] >= 0 else 'U'}


def test_figures_match_pandas(demo):
    out, stdout = demo
    got = json.loads((out / 'variance_summary.json').read_text())
    want = expected()
    assert got['operating_profit_actual'] == pytest.approx(want['actual'], abs=0.01)
    assert got['operating_profit_budget'] == pytest.approx(want['budget'], abs=0.01)
    assert got['total_variance'] == pytest.approx(want['actual'] - want['budget'], abs=0.01)
    assert got['total_variance_pct'] == pytest.approx(
        (want['actual'] - want['budget']) / abs(want['budget']) * 100, abs=0.01)
    top = got['biggest_driver']
    assert (top['quarter'], top['department'], top['account']) == want['key']
    assert top['variance'] == pytest.approx(want['variance'], abs=0.01)
    assert top['direction'] == want['direction']
    # What the demo printed is what it saved.
    assert f"'total_variance': {got['total_variance']!r}" in stdout
    assert f"'department': {top['department']!r}" in stdout
    report = (out / 'variance_report.md').read_text()
    assert f"{got['total_variance']:+,.0f} USD" in report
    assert f"The biggest driver: {top['department']} {top['account']}" in report


def test_workbook_and_charts_came_back(demo):
    out, stdout = demo
    book = openpyxl.load_workbook(out / 'variance_report.xlsx')
    assert book.sheetnames == ['Summary', 'Departments', 'Top drivers', 'Quarters', 'Detail']
    detail = book['Detail']
    header = [c.value for c in detail[1]]
    lines = len(pd.read_csv(BUDGET)) * 4
    assert detail.max_row == lines + 1
    assert detail.freeze_panes == 'A2'
    actual_col = header.index('actual') + 1
    assert detail.cell(2, actual_col).number_format == '#,##0;[Red]-#,##0'
    total = sum(detail.cell(r, actual_col).value for r in range(2, lines + 2))
    assert total == pytest.approx(gl_total_abs(), abs=0.01)
    for name in CHARTS:
        assert (out / name).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
        assert f'-> {out}/{name}' in stdout
    # Each chart also came back as a figure output, as a chat would show it.
    assert len(glob.glob(str(out / 'cell*-output*.png'))) == len(CHARTS)


def gl_total_abs():
    """Revenue and cost added up as positive amounts, as the Detail sheet has them."""
    gl = pd.concat([pd.read_csv(p) for p in ACTUALS])
    return gl['amount'].abs().groupby([gl['department'], gl['account'], gl['period']]).sum().sum()
