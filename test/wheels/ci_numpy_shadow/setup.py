from setuptools import setup

# Its top-level package is numpy: installing it would shadow the
# manifest's numpy, so the host refuses it.
setup(name="ci_numpy_shadow", version="1.0", packages=["numpy"])
