# The figures for the agent's answer, also saved for whoever reads them next.
import json
import os
summary = {
    'operating_profit_actual': round(float(total['actual']), 2),
    'operating_profit_budget': round(float(total['budget']), 2),
    'total_variance': round(float(total['variance']), 2),
    'total_variance_pct': round(float(total['variance_pct']), 2),
    'biggest_driver': {'quarter': top['quarter'], 'department': top['department'],
                       'account': int(top['account']), 'account_name': top['account_name'],
                       'variance': round(float(top['variance']), 2),
                       'direction': top['direction']},
    'files': sorted(f for f in os.listdir('.') if f.startswith(('variance_', 'chart_'))),
}
with open('variance_summary.json', 'w') as f:
    json.dump(summary, f, indent=2)
summary
