"""`hyperpod-dpd size`: the PD buffer and GPU memory report of core/sizing/report.py, offline (command)."""
