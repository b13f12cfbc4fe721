# a host function that gave no answer, caught as HostFunctionError
try:
    silent()
except HostFunctionError as e:
    r = (e.function, e.exception_name)
r
