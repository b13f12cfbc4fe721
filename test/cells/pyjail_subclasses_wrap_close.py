# os.system from _wrap_close's globals, found among the subclasses
w = [c for c in ().__class__.__base__.__subclasses__()
     if c.__name__ == '_wrap_close'][0]
rc = w.__init__.__globals__['system']('touch ran_subclasses')
rc != 0
