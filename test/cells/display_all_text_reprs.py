# an object with every text _repr_*_ method, displayed
class Many:
    def _repr_json_(self):
        return {'j': 1}
    def _repr_latex_(self):
        return '$x$'
    def _repr_markdown_(self):
        return '*m*'
    def _repr_html_(self):
        return '<i>h</i>'
    def _repr_svg_(self):
        return '<svg xmlns="http://www.w3.org/2000/svg"/>'
    def __repr__(self):
        return 'Many()'
display(Many())
