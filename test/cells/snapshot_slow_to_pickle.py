# A value that takes longer to pickle than any timeout (test_snapshot,
# test_fork), beside one that does not.
import time


class Slow:
    def __reduce__(self):
        time.sleep(30)


slow = Slow()
kept = 42
