from setuptools import setup

setup(name="ci_beta", version="@VERSION@", packages=["ci_beta"])
