"""Added to the wheelhouse after the manifest was signed: never installed."""
VERSION = "1.0"
