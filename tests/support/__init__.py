"""Helpers shared by test modules in several folders (``pythonpath = ["tests"]`` in pyproject.toml makes them
importable as ``support.*``); fixtures stay in the conftest files."""
