"""The stack's service level objectives as Prometheus rules: the pinned vLLM's series per pool, recording rules, alerts, the rule file, and its delivery through the workspace's alert manager."""
