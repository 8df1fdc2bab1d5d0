"""`hyperpod-dpd canary`: promote, hold or roll back a candidate of the traffic split, from live
metrics (hyperpod_dpd/cli/canary.py parses the flags)."""
