# after %pip install ci_alpha ci_fast: the site directory the host
# unpacked them into is read-only to the cell, whatever it tries
import os
import sys
import ci_beta
site = os.path.dirname(os.path.dirname(ci_beta.__file__))


def tried(f):
    try:
        f()
    except OSError:
        return 'refused'
    return 'allowed'


{'new file': tried(lambda: open(site + '/x.py', 'w')),
 'chmod site': tried(lambda: os.chmod(site, 0o777)),
 'append to a module': tried(lambda: open(ci_beta.__file__, 'a')),
 'chmod a module': tried(lambda: os.chmod(ci_beta.__file__, 0o666)),
 'remove a module': tried(lambda: os.unlink(ci_beta.__file__)),
 'new directory': tried(lambda: os.mkdir(site + '/d')),
 'site on the path': site in sys.path}
