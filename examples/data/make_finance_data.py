"""Writes the finance demo's sample data: a fictional company's 2025.

    /usr/bin/python3 examples/data/make_finance_data.py [OUTDIR]

OUTDIR (default: this file's folder) receives four general-ledger exports
of actuals, gl_actuals_2025Q1.csv to gl_actuals_2025Q4.csv, one journal
line a row as an accounting system exports them (debits positive, credits
negative, so revenue is negative), and budget_2025.csv, the budget by
department, account and quarter in the wide layout a planning sheet has.
Only the standard library is used and the generator is seeded, so the same
Python writes the same bytes every time (test/demo checks that it does).
"""
import csv
import os
import random
import sys

SEED = 2025
YEAR = 2025

# The chart of accounts: number, name, type. Revenue is 4xxx, cost the rest.
ACCOUNTS = {
    4000: ('Product revenue', 'revenue'),
    4100: ('Subscription revenue', 'revenue'),
    4200: ('Professional services revenue', 'revenue'),
    5000: ('Cost of goods sold', 'cost'),
    5100: ('Hosting', 'cost'),
    6000: ('Salaries', 'cost'),
    6100: ('Benefits and payroll tax', 'cost'),
    6200: ('Contractors', 'cost'),
    6300: ('Travel', 'cost'),
    6400: ('Software subscriptions', 'cost'),
    6500: ('Marketing programs', 'cost'),
    6600: ('Rent and facilities', 'cost'),
    6700: ('Professional fees', 'cost'),
}

# Each department's accounts and their quarterly budget (USD).
BUDGET = {
    'Sales': {4000: 3_900_000, 4100: 2_600_000, 6000: 620_000, 6100: 150_000,
              6300: 95_000, 6400: 30_000},
    'Customer Success': {4200: 700_000, 4100: 500_000, 6000: 310_000,
                         6100: 75_000, 6200: 60_000, 6300: 25_000},
    'Marketing': {6000: 240_000, 6100: 58_000, 6500: 420_000, 6300: 40_000,
                  6400: 45_000, 6200: 35_000},
    'Engineering': {6000: 1_150_000, 6100: 280_000, 6200: 180_000,
                    6400: 120_000, 5100: 210_000, 6300: 20_000},
    'Operations': {5000: 1_050_000, 6000: 260_000, 6100: 62_000,
                   6600: 180_000, 6300: 15_000},
    'G&A': {6000: 330_000, 6100: 80_000, 6600: 95_000, 6700: 110_000,
            6400: 40_000, 6300: 12_000},
}

# Seasonality by quarter: revenue (and cost of goods) peaks in Q4, travel
# in Q2, marketing spend before the Q4 buying season.
SEASON = {
    'revenue': (0.94, 0.98, 1.00, 1.10),
    5000: (0.90, 0.97, 1.00, 1.13),
    6300: (0.85, 1.25, 0.90, 1.00),
    6500: (0.90, 1.00, 1.15, 0.95),
}

# The variances worth finding: (department, account, quarter) -> how far
# the actuals stand from the budget, on top of the ordinary noise.
SHOCKS = {
    ('Engineering', 6200, 3): 1.85,        # a migration project staffed by contractors
    ('Engineering', 6200, 4): 1.60,
    ('Sales', 4100, 4): 0.83,              # a large renewal slipped into next year
    ('Marketing', 6500, 2): 1.55,          # an unbudgeted trade show
    ('Customer Success', 4200, 3): 1.35,   # an implementation project delivered early
    ('Engineering', 5100, 4): 1.30,        # hosting grew with usage
    ('G&A', 6700, 1): 1.90,                # audit and legal fees
}

DESCRIPTIONS = {
    'revenue': ['Invoice', 'Invoice', 'Credit note', 'Revenue recognition'],
    'cost': ['AP invoice', 'Accrual', 'Payroll run', 'Expense report', 'Card transaction'],
}


def type_of(account):
    return ACCOUNTS[account][1]


def quarter_budget(dept, account, q):
    base = BUDGET[dept][account]
    key = 'revenue' if type_of(account) == 'revenue' else account
    return round(base * SEASON.get(key, (1, 1, 1, 1))[q - 1], -2)


def split(total, n, rnd):
    """n amounts in cents that add up to total cents, all of its sign."""
    weights = [rnd.uniform(0.2, 1.0) for _ in range(n)]
    parts = [int(total * w / sum(weights)) for w in weights]
    parts[-1] += total - sum(parts)
    return parts


def journal_lines(rnd, q):
    rows = []
    journal = 0
    for month in range(3 * q - 2, 3 * q + 1):
        period = f'{YEAR}-{month:02d}'
        for dept in BUDGET:
            for account in BUDGET[dept]:
                kind = type_of(account)
                budget = quarter_budget(dept, account, q)
                noise = rnd.gauss(1.0, 0.035)
                actual = budget * noise * SHOCKS.get((dept, account, q), 1.0)
                month_cents = round(actual / 3 * rnd.uniform(0.94, 1.06) * 100)
                sign = -1 if kind == 'revenue' else 1
                lines = 1 if account in (6600,) else rnd.randint(4, 14)
                for cents in split(month_cents, lines, rnd):
                    journal += 1
                    day = rnd.randint(1, 28)
                    rows.append([period, f'{YEAR}-{month:02d}-{day:02d}',
                                 f'JE{YEAR}{q}{journal:05d}', dept, account,
                                 ACCOUNTS[account][0], rnd.choice(DESCRIPTIONS[kind]),
                                 f'{sign * cents / 100:.2f}', 'USD'])
    rows.sort(key=lambda r: (r[1], r[2]))
    return rows


def write_csv(path, header, rows):
    with open(path, 'w', newline='', encoding='utf-8') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(header)
        w.writerows(rows)


def main(outdir):
    rnd = random.Random(SEED)
    header = ['period', 'posting_date', 'journal_id', 'department', 'account',
              'account_name', 'description', 'amount', 'currency']
    for q in range(1, 5):
        write_csv(os.path.join(outdir, f'gl_actuals_{YEAR}Q{q}.csv'), header,
                  journal_lines(rnd, q))
    budget_rows = []
    for dept in BUDGET:
        for account in sorted(BUDGET[dept]):
            budget_rows.append([dept, account, ACCOUNTS[account][0], type_of(account)]
                               + [f'{quarter_budget(dept, account, q):.0f}' for q in range(1, 5)])
    write_csv(os.path.join(outdir, f'budget_{YEAR}.csv'),
              ['department', 'account', 'account_name', 'account_type',
               f'{YEAR}Q1', f'{YEAR}Q2', f'{YEAR}Q3', f'{YEAR}Q4'], budget_rows)


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
