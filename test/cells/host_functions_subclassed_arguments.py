# int, str and list subclasses that lie, passed to lookup: what each call gives
class I(int):
    def __le__(s, o): return True
    def __ge__(s, o): return True
class K(str):
    def __hash__(s): return id(s)
    def __eq__(s, o): return s is o
class L(list):
    def __iter__(s): return iter([0])
def try_(f):
    try:
        return f()['total']
    except (TypeError, ValueError) as e:
        return type(e).__name__
[try_(lambda: lookup(I(2**70))),
 try_(lambda: lookup({K('a'): 1, K('a'): 2})),
 try_(lambda: lookup(**{K('a'): 1, K('a'): 2})),
 try_(lambda: lookup(L([2**70])))]
