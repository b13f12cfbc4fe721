# an object with _repr_markdown_ defined before _repr_html_, displayed
class Rich:
    def _repr_markdown_(self):
        return '**M**'
    def _repr_html_(self):
        return '<b>H</b>'
    def __repr__(self):
        return 'Rich()'
display(Rich())
