"""`hyperpod-dpd benchmark`: DPD against colocated on the user's own endpoint, reproducibly.

scenario (the command line's workload, validated), run (one run: flags checked, aiperf,
results.json), loadgen (aiperf in its own venv: the argv, the run, its exports), results
(results.json from those exports), compare (report.md: the tables and percent improvements),
report (writes them), charts (the PNGs, drawn in the benchmark venv), fake_server (a local
endpoint with known timings; its flags in fake_timings), word_tokenizer/ (one token per word,
for trying it out). The CLI side imports only the standard library (and, for --stack, the
settings); aiperf, matplotlib and aiohttp live in build/benchmark-venv.
"""
