# The report, as Markdown and as a formatted Excel workbook.
def md(df):
    """A Markdown table: whole USD, variances signed, numbers to the right."""
    out = df.reset_index()
    align = ['right' if out[c].dtype.kind in 'fi' else 'left' for c in out.columns]
    for c in out.columns:
        if c == 'variance_pct':
            out[c] = out[c].map(lambda v: f'{v:+.1f} %')
        elif c == 'variance':
            out[c] = out[c].map(lambda v: f'{v:+,.0f}')
        elif out[c].dtype.kind == 'f':
            out[c] = out[c].map(lambda v: f'{v:,.0f}')
    return out.to_markdown(index=False, colalign=align)

total = year.loc['Operating profit']
top = drivers.iloc[0]
with open('variance_report.md', 'w') as f:
    f.write('# Variance report, 2025: actual against budget\n\n')
    f.write(f"Operating profit {total['actual']:,.0f} USD against a budget of "
            f"{total['budget']:,.0f}: {total['variance']:+,.0f} USD "
            f"({total['variance_pct']:+.1f} %, {'favourable' if total['variance'] >= 0 else 'unfavourable'}).\n"
            f"The biggest driver: {top['department']} {top['account']} {top['account_name']} in "
            f"{top['quarter']}, {top['variance']:+,.0f} USD ({top['variance_pct']:+.1f} %, "
            f"{'favourable' if top['direction'] == 'F' else 'unfavourable'}).\n\n")
    f.write('F: favourable (revenue above budget, cost below it); U: unfavourable.\n\n')
    f.write('## The year\n\n' + md(year) + '\n\n')
    f.write('## By department\n\n' + md(by_dept) + '\n\n')
    f.write('## Top drivers\n\n' + md(drivers) + '\n\n')
    f.write('## By quarter\n\n' + md(trend) + '\n\n')
    f.write('## Change in the actuals on the previous quarter (%)\n\n'
            + qoq.to_markdown(floatfmt='+.1f', missingval='-') + '\n')

sheets = {
    'Summary': year.reset_index(),
    'Departments': by_dept.reset_index(),
    'Top drivers': drivers.reset_index(),
    'Quarters': trend.reset_index(),
    'Detail': lines.drop(columns=['year', 'profit_impact'])
                   .sort_values(['quarter', 'department', 'account']),
}
with pd.ExcelWriter('variance_report.xlsx', engine='xlsxwriter') as xl:
    book = xl.book
    money = book.add_format({'num_format': '#,##0;[Red]-#,##0'})
    pct = book.add_format({'num_format': '+0.0" %";[Red]-0.0" %"'})
    good = book.add_format({'bg_color': '#C6EFCE', 'font_color': '#006100'})
    bad = book.add_format({'bg_color': '#FFC7CE', 'font_color': '#9C0006'})
    for name, df in sheets.items():
        df.to_excel(xl, sheet_name=name, index=False)
        sheet = xl.sheets[name]
        sheet.freeze_panes(1, 0)
        sheet.autofilter(0, 0, len(df), len(df.columns) - 1)
        for i, col in enumerate(df.columns):
            width = max(len(str(col)), *(len(str(v)) for v in df[col].head(50))) + 2
            fmt = pct if col == 'variance_pct' else money if df[col].dtype.kind == 'f' else None
            sheet.set_column(i, i, min(width, 40), fmt)
        if 'direction' in df.columns:
            j = list(df.columns).index('direction')
            for text, fmt in (('F', good), ('U', bad)):
                sheet.conditional_format(1, j, len(df), j, {'type': 'cell', 'criteria': '==',
                                                            'value': f'"{text}"', 'format': fmt})
print('wrote variance_report.md and variance_report.xlsx, sheets:', ', '.join(sheets))
