# Popen found among object's subclasses
__import__('sub' + 'process')
P = [c for c in object.__subclasses__() if c.__name__ == 'Popen'][0]
P(['touch', 'ran_popen_class']).wait()
