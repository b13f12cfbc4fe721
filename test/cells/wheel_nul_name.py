import _codeinterp
_codeinterp.host_install('wheel', 'x\x00y.whl')
