"""`hyperpod-dpd advise`: colocated or DPD, and which layout, predicted by aisimulate from the
workload and the SLOs.

targets (our instance types and models as aisimulate's), setting (what it takes from a stack),
workload (lengths, trace, load, SLOs),
search (layouts, prediction configs, candidates), engine (the venv and the subprocess bridge to
simulate.py, the one program that imports aisimulate; one process per command), recommend (the
cheapest layout meeting the SLOs and why), capacity (the load one replica holds within the SLO,
searched), scaling (a layout's autoscaling from it: targets, replicas, the pair), patch (the
stack-file patch, --write), render (the recommendation and the nearest layouts, JSON), chart (the
frontier PNG's data and labels, drawn by frontier_plot.py in the benchmark venv), measured
(predicted beside a benchmark run), command (the command itself).
"""
