# an object with _repr_html_ as the cell's value
class H:
    def _repr_html_(self):
        return '<p>h</p>'
    def __repr__(self):
        return 'H()'
H()
