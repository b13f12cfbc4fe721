# raises X('x'), of a metaclass whose __qualname__ raises KeyboardInterrupt
class M(type):
    def __getattribute__(cls, n):
        if n == '__qualname__': raise KeyboardInterrupt
        return type.__getattribute__(cls, n)
class X(Exception, metaclass=M): pass
raise X('x')
