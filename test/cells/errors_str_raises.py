# raises BadStr(), whose str() raises RuntimeError
class BadStr(Exception):
    def __str__(self):
        raise RuntimeError('no str')
raise BadStr()
