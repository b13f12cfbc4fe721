# A value whose pickling calls the session's host function secret_op
# (test_snapshot), which a cell may call and a pickle may not.
class Calls:
    def __reduce__(self):
        secret_op()
        return (int, ())


calls = Calls()
secret_op()
