# A summary value for the agent's answer: the cell's last expression.
import os
worst = qoq['realgdp'].idxmin()
{'quarters': len(df),
 'most_volatile': report.index[0],
 'least_volatile': report.index[-1],
 'gdp_qoq_std_pct': float(report.loc['realgdp', 'std']),
 'worst_gdp_quarter': f"{worst} ({qoq['realgdp'][worst]:+.2f} %)",
 'files': sorted(f for f in os.listdir('.') if f.startswith('variance_'))}
