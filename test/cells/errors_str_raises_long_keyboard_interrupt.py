# a MemoryError whose str() raises a KeyboardInterrupt of a non-ASCII, 100-character name
class E(MemoryError):
    def __str__(self):
        raise type('\u00e9' * 100, (KeyboardInterrupt,), {})()
raise E()
