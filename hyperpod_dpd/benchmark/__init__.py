"""`hyperpod-dpd benchmark`: DPD against colocated on the user's own endpoint, reproducibly.

scenario (the command line's workload, validated), loadgen (aiperf in its own venv: the argv,
the run, its exports), results (results.json from those exports), compare (report.md: the
tables and percent improvements), report (writes them), charts (the PNGs, drawn in the
benchmark venv), fake_server (a local endpoint with known timings).
Only the standard library is imported here; aiperf and matplotlib live in build/benchmark-venv.
"""
