# defines try_(f): 'done', or the name of the OSError f raised
def try_(f):
    try:
        f()
        return 'done'
    except OSError as e:
        return type(e).__name__
