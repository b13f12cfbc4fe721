# help(len) through PAGER, with stdin and stdout faking a terminal
import io, os, pydoc, sys
class Tty(io.StringIO):
    def isatty(self):
        return True
os.environ['PAGER'] = 'touch ran_pager; cat'
os.environ['TERM'] = 'xterm'
saved = sys.stdin, sys.stdout, pydoc.pager
sys.stdin, sys.stdout = Tty(), Tty()
try:
    pydoc.pager = pydoc.getpager()
    help(len)
finally:
    sys.stdin, sys.stdout, pydoc.pager = saved
