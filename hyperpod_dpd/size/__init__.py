"""`hyperpod-dpd size`: the PD buffer and GPU memory report of core/sizing.py, offline (command)."""
