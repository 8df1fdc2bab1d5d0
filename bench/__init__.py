"""The project's own speed measurements (`make bench`: `python -m bench.plan`, `python -m
bench.checkpoint_upload`), run on demand and never by `make test`: numbers, not assertions. Not
to be confused with the user's load test, `hyperpod-dpd benchmark` (hyperpod_dpd/benchmark)."""
