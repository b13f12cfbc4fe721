# input() in a thread the cell starts
import threading
got = []
def f():
    try:
        input('t? ')
    except Exception as e:
        got.append(type(e).__name__ + ': ' + str(e))
t = threading.Thread(target=f)
t.start()
t.join()
got[0]
