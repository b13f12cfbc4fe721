# H(n): a value whose HTML is n bytes (<p>, n - 7 x's, </p>) and whose text is 'H'
class H:
    def __init__(self, n):
        self.n = n
    def _repr_html_(self):
        return '<p>' + 'x' * (self.n - 7) + '</p>'
    def __repr__(self):
        return 'H'
