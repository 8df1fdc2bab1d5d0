"""An upload: its steps in order (run.py, upload_checkpoint), what to transfer (planner.py),
the transfers (executor.py) and their checks (checks.py), its options (options.py) and result
(result.py). Nothing is imported here: options.py is read by `--help` of the command line,
which must not load boto3."""
