"""The traffic split's API keys: each generated (random.RandomPassword, a Pulumi secret) and held
by the listener's rule, what the listener answers a request without one, and the newest as a
Kubernetes Secret for the clients the stack runs in the cluster (specs/traffic/__init__.py says why the
load balancer checks the key and not vLLM)."""

from __future__ import annotations

import json

from core import api_key
from core.refs import ref
from core.vocabulary import SECRET_TYPE, TRAFFIC_SPLIT
from settings.endpoint.listener import TrafficListenerConfig
from specs.base import Desired

RANDOM_PASSWORD_TYPE = "random:index/randomPassword:RandomPassword"
# What the listener answers a request without a key: 401 as vLLM's own check would, with an
# OpenAI-style error body saying what is missing (an ALB fixed response body: at most 1024 bytes).
UNAUTHORIZED = {
    "type": "fixed-response",
    "fixedResponse": {
        "contentType": "application/json",
        "statusCode": "401",
        "messageBody": json.dumps(
            {
                "error": {
                    "message": f"missing or unknown API key: send {api_key.HEADER}: "
                    f"{api_key.SCHEME} <key> (stack output {api_key.OUTPUT})",
                    "type": "authentication_error",
                    "code": 401,
                }
            }
        ),
    },
}


def api_keys(name: str, listener_cfg: TrafficListenerConfig) -> tuple[Desired, ...]:
    """One generated key per name of `trafficListener.apiKeyNames`, the newest last."""
    return tuple(
        Desired(
            RANDOM_PASSWORD_TYPE,
            f"{name}-api-key-{key_name}",
            (TRAFFIC_SPLIT,),
            {"length": api_key.LENGTH, "special": False, "upper": False},
        )
        for key_name in listener_cfg.api_key_names
    )


def key_secret(name: str, namespace: str, key: Desired) -> Desired:
    """The newest key as a Kubernetes Secret in `namespace`, for the clients the stack runs
    there (core/api_key.py); a Pulumi secret, so encrypted in the stack's state."""
    return Desired(
        SECRET_TYPE,
        f"{name}-key-secret-{namespace}",
        (TRAFFIC_SPLIT,),
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": api_key.SECRET_NAME, "namespace": namespace},
            "type": "Opaque",
            "stringData": {api_key.SECRET_KEY: ref(key.name, "result")},
        },
    )
