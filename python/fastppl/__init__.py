from fastppl._core import __version__
