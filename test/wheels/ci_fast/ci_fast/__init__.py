"""A compiled extension from the wheelhouse: the .so must map from the site dir."""
from ci_fast._speed import fib

__all__ = ["fib"]
