# a loop that catches KeyboardInterrupt and goes on
while True:
    try:
        while True:
            pass
    except KeyboardInterrupt:
        pass
