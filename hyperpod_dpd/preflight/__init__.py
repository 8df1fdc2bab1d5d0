"""`hyperpod-dpd preflight`: AWS asked, before the first `pulumi up`, whether the stack can work
(checks: GPU offerings in the AZ, quotas, training plans, add-on versions, the deployers
in IAM; of a deployed stack, what the nodes boot with; command: the run)."""
