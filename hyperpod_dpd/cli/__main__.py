"""`python -m hyperpod_dpd.cli ...`, as `hyperpod-dpd diff` plans a git ref with that ref's code."""

from hyperpod_dpd.cli import entry

entry()
