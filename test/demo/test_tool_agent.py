"""examples/tool_agent.c, checked from outside the sandbox.

The example's cells get the host's orders through a host function and
the FX rates through the one URL prefix the host allows, whose service
wants a token that only the host holds; the figures they print must be
what plain pandas computes here from the same two files.
"""
import os
import re
import subprocess

import pandas as pd
import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
DATA = os.path.join(TOP, 'examples', 'data')
BUILD = os.path.join(TOP, os.environ.get('BUILD', 'build'))
ORDERS = os.path.join(DATA, 'orders_2025Q1.csv')
RATES = os.path.join(DATA, 'fx_rates_2025Q1.csv')


@pytest.fixture(scope='module')
def output():
    run = subprocess.run([os.path.join(BUILD, 'tool_agent'),
                          os.path.join(TOP, 'examples', 'tool_agent'), ORDERS, RATES],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr
    return run.stdout


def revenue():
    orders = pd.read_csv(ORDERS).merge(pd.read_csv(RATES), on='currency')
    orders['usd'] = orders.units * orders.unit_price * orders.usd_per_unit
    return orders


def test_every_cell_ran(output):
    assert re.findall(r'^== (\S+) \((\w+)\)$', output, re.M) == [
        ('1_orders.py', 'ok'), ('2_rates.py', 'ok'), ('3_revenue.py', 'ok'),
        ('4_refused.py', 'ok')]


def test_the_host_function_answers_from_the_hosts_table(output):
    orders = pd.read_csv(ORDERS)
    emea = orders[(orders.region == 'EMEA') & (orders.month == '2025-03')]
    assert f'{len(orders)} orders; {len(emea)} in EMEA in 2025-03' in output
    assert len(orders) == 24 and len(emea) == 4


def test_revenue_through_the_allowed_url_is_plain_pandas(output):
    orders = revenue()
    total = re.search(r'^total revenue: ([\d,.]+) USD$', output, re.M)
    assert total, output
    assert float(total.group(1).replace(',', '')) == pytest.approx(round(orders.usd.sum(), 2))
    emea = orders[orders.region == 'EMEA'].groupby('month').usd.sum().round(2)
    row = re.search(r'^EMEA +([\d.]+) +([\d.]+) +([\d.]+)$', output, re.M)
    assert row, output
    assert [float(v) for v in row.groups()] == pytest.approx(list(emea))


def test_the_token_stays_with_the_host(output):
    # The service answers only with the token (the rates came back), and
    # the cell saw no trace of it.
    assert 'the token is in the cell: False' in output
    assert 'fx-service-token' not in output


def test_any_other_url_is_refused_naming_the_allowed_prefix(output):
    m = re.search(r'^refused: network access to http://127\.0\.0\.1:1/admin is not allowed in '
                  r'this sandbox; allowed: (http://127\.0\.0\.1:\d+/fx/)$', output, re.M)
    assert m, output
    assert f"the host's FX service: {m.group(1)} " in output
