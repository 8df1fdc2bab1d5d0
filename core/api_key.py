"""The traffic split's API key: how a client presents it, and where the stack keeps it for the
clients it runs itself. One place for the names the stack (specs/traffic/keys.py), `verify` and
`benchmark` (and the in-cluster benchmark program, which ships this file) share.

Clients send `Authorization: Bearer <key>`, what OpenAI clients send for their `api_key`
(aiperf's `--api-key`, the `openai` package), so no client needs a header of its own. The split's
listener forwards only requests that carry one of the stack's keys and answers every other one
with 401 (specs/traffic/__init__.py says why the load balancer checks it and not vLLM).
"""

from __future__ import annotations

HEADER = "Authorization"
SCHEME = "Bearer"
# Generated keys: lowercase letters and digits only. An ALB compares header values case
# insensitively and reads `*` and `?` in them as wildcards (ELB User Guide, HTTP header
# conditions), so neither capitals nor punctuation would add anything; 48 characters of 36 are
# 248 bits. "Bearer " and the key stay within the 128 characters a compared value may have.
LENGTH = 48
# Where a client run by hyperpod-dpd (verify, benchmark, the in-cluster benchmark Job) reads the
# key: this environment variable, which the stack's Kubernetes Secret fills in the cluster.
ENV = "HYPERPOD_DPD_API_KEY"
# The Kubernetes Secret holding the key clients are handed, in each namespace of the split's
# endpoints (the in-cluster clients run there), and its data key.
SECRET_NAME = "hyperpod-dpd-traffic-api-key"
SECRET_KEY = "apiKey"
# The stack output holding that key (a Pulumi secret: `pulumi stack output --show-secrets`).
OUTPUT = "trafficApiKey"


def bearer(key: str) -> str:
    """The header value a client sends: 'Bearer <key>'."""
    return f"{SCHEME} {key}"


def headers(key: str | None) -> dict[str, str]:
    """The request headers that present `key`; none without one."""
    return {HEADER: bearer(key)} if key else {}
