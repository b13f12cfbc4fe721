from setuptools import setup

setup(name="ci_alpha", version="1.0", packages=["ci_alpha"], install_requires=["ci-beta>=2.0"])
