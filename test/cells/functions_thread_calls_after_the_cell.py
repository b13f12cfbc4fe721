# starts a thread that calls echo once the test lets it (go)
import threading
late, go = [], threading.Event()
def later():
    go.wait()
    try:
        echo(1)
        late.append('answered')
    except Exception as e:
        late.append(f'{type(e).__name__}: {e}')
threading.Thread(target=later).start()
