# The quarters with the largest swings.
for name in ['realgdp', 'realinv']:
    moves = qoq[name].dropna()
    top = moves.loc[moves.abs().nlargest(5).index]
    print(f'largest QoQ moves of {name}:')
    for quarter, change in top.items():
        print(f'  {quarter}  {change:+6.2f} %')
