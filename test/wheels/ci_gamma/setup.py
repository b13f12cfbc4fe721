from setuptools import setup

setup(name="ci_gamma", version="1.0", packages=["ci_gamma"])
