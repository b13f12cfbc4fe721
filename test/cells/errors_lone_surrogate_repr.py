# a value whose repr holds a lone surrogate
class R:
    def __repr__(self):
        return 'r\udcffr'
R()
