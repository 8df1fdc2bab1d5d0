"""`hyperpod-dpd fetch`: the pinned chart and IAM policy the stack deploys, downloaded and
verified once into .hyperpod-dpd/ (artifacts), before `pulumi preview`/`up` (command: the run)."""
