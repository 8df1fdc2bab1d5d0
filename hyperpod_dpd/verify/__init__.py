"""`hyperpod-dpd verify`: post-deploy checks of a DPD endpoint (the AWS DPD guide's "Verify the
deployment" and "Invoke the endpoint" steps,
https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-model-deployment-dpd.html).
Its parser is hyperpod_dpd/cli/verify.py; the run, `command`.

- `logs`: pure parsers of the router, LMCache and worker log lines;
- `causes`: the likely cause and fix of each failure, each pointing at its section of
  docs/troubleshooting.md;
- the Kubernetes reads/writes: hyperpod_dpd/shared/kube.py (shared with the load test);
- `prompts`: the short/long prompts and the `PromptClient` seam (one-shot pod or direct HTTP);
- `results`: the check results (`Check`, `Target`, `Report`);
- `endpoint`, `routing`, `kv_transfer`, `matching`: the checks, as pure judgements;
- `runner`: `verify()`, which runs them in order against a cluster (`run_state`: what a run
  holds; `prompt_checks`: the prompts it sends; `door_checks`: the model's doors it tries);
- `report`: the report as text or JSON.
"""
