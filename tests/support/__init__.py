"""Helpers shared by the test layers (core, cli, tui, e2e). Test modules import from here,
never from one another; fixtures live in ``tests/conftest.py``."""
