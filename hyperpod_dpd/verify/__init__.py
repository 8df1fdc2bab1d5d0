"""`hyperpod-dpd verify`: post-deploy checks of a DPD endpoint (dpd-facts.md, "Verifying").

- `logs`: pure parsers of the router, LMCache and worker log lines;
- `causes`: the likely cause and fix of each failure (field-problems.md);
- `cluster`: the Kubernetes reads/writes, through the `kubernetes` client;
- `prompts`: the short/long prompts and the `PromptClient` seam (one-shot pod or direct HTTP);
- `checks`: the checks, as pure judgements plus `verify()` that runs them in order;
- `cli`: `register(subparsers)` and `run(args, project_dir)`.
"""
