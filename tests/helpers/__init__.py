"""Helpers shared by the test modules (importable as ``helpers.*``; ``tests/`` is on the path)."""
