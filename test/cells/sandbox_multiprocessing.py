# starts a multiprocessing.Process and waits for it
import multiprocessing
p = multiprocessing.Process(target=print)
p.start()
p.join()
