"""Maintainers' scripts, run as files (python scripts/NAME.py): not part of the program or the CLI."""
