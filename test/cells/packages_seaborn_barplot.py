# a seaborn bar plot of means: the bars' heights
import seaborn as sns, pandas as pd
df = pd.DataFrame({'k': list('aabb'), 'v': [1, 3, 2, 6]})
ax = sns.barplot(data=df, x='k', y='v', errorbar=None)
[p.get_height() for p in ax.patches]
