"""A pure package of the wheelhouse test, built as 1.0 and as 2.0."""
VERSION = "@VERSION@"
