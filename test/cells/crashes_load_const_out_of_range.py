# a code object of LOAD_CONST 200 with one constant, run
import dis
op = dis.opmap
body = bytes([op['RESUME'], 0, op['LOAD_CONST'], 200, op['RETURN_VALUE'], 0])
code = (lambda: 0).__code__.replace(co_code=body, co_consts=(None,))
exec(code)
