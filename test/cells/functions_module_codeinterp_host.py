# the functions in codeinterp_host, imported from it
import codeinterp_host
from codeinterp_host import echo as e2
e2 is echo, sorted(codeinterp_host.__all__), e2(7)['args']
