"""`hyperpod-dpd benchmark`, the user's load test: DPD against colocated on the user's own
endpoint, reproducibly. (The project's own speed measurements are bench/, a different thing.)

command (the three subcommands' runs), scenario (the command line's workload, validated), run (one run: flags checked, aiperf,
results.json), loadgen (aiperf in its own venv: the argv, the run, its exports), results
(results.json from those exports), compare (report.md: the tables and percent improvements),
report (writes them), plots (the PNG charts, drawn in the benchmark venv), fake_server (a local
endpoint with known timings; its flags in fake_timings), word_tokenizer/ (one token per word,
for trying it out), job/in_cluster/cluster_run (the same run as a Job in the stack's cluster). The CLI side imports only the standard library (and, for --stack, the
settings); aiperf, matplotlib and aiohttp live in build/loadtest-venv.
"""
