# A fatal cell: os._exit() with status 3.
import os

os._exit(3)
