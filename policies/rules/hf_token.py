"""hyperpod-dpd-hf-token: a Hugging Face token never appears as a plaintext value (an env var
with a literal value, or any `hf_...` token string in a resource's inputs)."""

from __future__ import annotations

import re

from policies.rules import views
from policies.rules.base import Finding, Rule

TOKEN = re.compile(r"^hf_[A-Za-z0-9]{20,}$")
TOKEN_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_TOKEN")


def _strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def check(resources, limits):
    for iec in views.endpoints(resources):
        for name, value in views.env(iec).items():
            if name in TOKEN_VARS and isinstance(value, str) and views.known(value):
                yield Finding(
                    iec.urn,
                    f"{name} is set as a plaintext environment variable; keep the token in "
                    "`pulumi config set --secret hyperpod-dpd:hfToken` (a Kubernetes Secret)",
                )
    for r in resources:
        if any(TOKEN.match(s) for s in _strings(r.props)):
            yield Finding(
                r.urn,
                f"{r.name} carries a Hugging Face token in plaintext; use "
                "`pulumi config set --secret hyperpod-dpd:hfToken`",
            )


RULE = Rule("hyperpod-dpd-hf-token", "No plaintext Hugging Face token", "mandatory", check)
