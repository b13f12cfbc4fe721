# a fork-context multiprocessing.Process that would touch ran_mp
import multiprocessing
def mark():
    open('ran_mp', 'w').close()
p = multiprocessing.get_context('fork').Process(target=mark)
p.start()
p.join()
