"""`hyperpod-dpd preflight`: AWS asked, before the first `pulumi up`, whether the stack can work
(checks: GPU offerings in the AZ, quotas, training plans, add-on versions; command: the run)."""
