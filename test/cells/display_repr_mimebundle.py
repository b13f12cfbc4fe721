# an object whose _repr_mimebundle_ gives markdown and HTML, displayed
class MB:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {'text/markdown': '**mb**', 'text/html': '<b>mb</b>'}
    def __repr__(self):
        return 'MB()'
display(MB())
