"""vLLM's own names, generated from the pinned vLLM: its flags, its metrics, the numbers the flags carry, the autoscaling signals built from the metrics and the pods they select."""
