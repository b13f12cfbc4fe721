# catching a host function's error as codeinterp_host.HostFunctionError
from codeinterp_host import HostFunctionError as E
try:
    fail()
except E as e:
    r = (e.function, e.exception_name, e.message)
r, E is HostFunctionError, issubclass(E, Exception)
