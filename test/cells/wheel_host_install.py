import _codeinterp
'%s: %s' % _codeinterp.host_install('wheel', WHEEL)
