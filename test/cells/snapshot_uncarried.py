# What a snapshot cannot carry (test_snapshot), each under its own name,
# one inside a list; and a value that it can.
import threading

gen = (i for i in range(3))
nested = [1, (i for i in range(2))]
fh = open('notes.txt', 'w')
worker = threading.Thread(target=print)
kept = 'still here'
