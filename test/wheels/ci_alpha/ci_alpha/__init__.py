"""Needs ci-beta 2.0 or later: the wheelhouse resolves it."""
VERSION = "1.0"


def beta_version():
    import ci_beta
    return ci_beta.VERSION
