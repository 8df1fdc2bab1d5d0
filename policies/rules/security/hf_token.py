"""hyperpod-dpd-hf-token: a Hugging Face token never appears as a plaintext value (an env var
with a literal value, or any `hf_...` token string in a resource's inputs)."""

from __future__ import annotations

import re

from core.vocabulary import SECRET_TYPE
from policies.rules import views
from policies.rules.base import Finding, Rule

# Anywhere in a value (a header, an image path, a URL), not only as the whole of it.
TOKEN = re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{20,}")
TOKEN_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACE_TOKEN")
SECRET_FIX = "`pulumi config set --secret hyperpod-dpd:hfToken hf_...`"


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
    for r in resources:
        reported = set()
        if r.type == views.IEC_TYPE:
            for name, value in views.env(r).items():
                if not (isinstance(value, str) and views.known(value)):
                    continue  # from a Secret (valueFrom) or a Pulumi secret
                if name in TOKEN_VARS or TOKEN.search(value):
                    reported.add(value)
                    yield Finding(
                        r.urn,
                        f"{views.endpoint_key(r, 'environmentVariables', name)} holds a token "
                        "in plaintext (it would sit in the manifest and the stack's state): "
                        f"remove {name} from {views.endpoint_key(r, 'environmentVariables')} "
                        f"and keep the token a secret: {SECRET_FIX}",
                    )
        # A Secret's data is where a token belongs (the engine hands analyzers secret values in
        # the clear, so only the resource type tells them apart).
        props = (
            r.props
            if r.type != SECRET_TYPE
            else {k: v for k, v in r.props.items() if k not in ("data", "stringData")}
        )
        # "hf_" first: a plan's inputs are thousands of strings (the code ConfigMap's among them),
        # and a substring test costs a tenth of the pattern's search.
        if any("hf_" in s and TOKEN.search(s) and s not in reported for s in _strings(props)):
            yield Finding(
                r.urn, f"{r.name} carries a Hugging Face token in plaintext; use {SECRET_FIX}"
            )


RULE = Rule("hyperpod-dpd-hf-token", "No plaintext Hugging Face token", "mandatory", check)
