# assigns t_during, prints tick, loops without end
t_during = 1
print('tick')
while True:
    pass
