"""Not numpy: a wheel that must never be installed over it."""
SHADOW = True
