import pip
pip.main(['install', PACKAGE])
