# a _repr_html_ that raises: displayed, then the cell goes on
class Bad:
    def _repr_html_(self):
        raise ValueError('html-boom')
    def __repr__(self):
        return 'Bad()'
display(Bad())
'after'
