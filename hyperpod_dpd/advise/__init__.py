"""`hyperpod-dpd advise`: colocated or DPD, and which layout, predicted by aisimulate from the
workload and the SLOs.

targets (our instance types and models as aisimulate's), workload (lengths, trace, load, SLOs),
search (layouts, prediction configs, candidates), engine (the venv and the subprocess bridge to
simulate.py, the one program that imports aisimulate), recommend (the cheapest layout meeting the
SLOs and why), patch (the stack-file patch, --write), render (tables, JSON), chart (the frontier
PNG, drawn by frontier_plot.py in the benchmark venv), command (the command itself).
"""
