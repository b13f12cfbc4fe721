# a last value whose repr raises RuntimeError('bad repr')
class BadRepr:
    def __repr__(self):
        raise RuntimeError('bad repr')
BadRepr()
