# lets functions_thread_calls_after_the_cell's thread call, and waits for its answer
import time
go.set()
for _ in range(200):
    if late: break
    time.sleep(0.05)
late
