from setuptools import Extension, setup

setup(name="ci_fast", version="1.0", packages=["ci_fast"],
      ext_modules=[Extension("ci_fast._speed", ["ci_fast/_speed.c"])])
