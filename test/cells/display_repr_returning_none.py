# a _repr_html_ that returns None, displayed and as the value
class N:
    def _repr_html_(self):
        return None
    def __repr__(self):
        return 'N()'
display(N())
N()
