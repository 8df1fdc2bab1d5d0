"""hyperpod-dpd-hf-token (policies/rules/security/hf_token.py): a Hugging Face token in plaintext in
HF_TOKEN, under another variable, in another resource, or inside a longer value."""

from __future__ import annotations

from tests.policies.conftest import iec_spec, named, set_env
from tests.policies.rules.helpers import IEC_URN, findings


def test_plaintext_hf_token(dev):
    set_env(dev, "HF_TOKEN", "hf_" + "a" * 34)
    assert [m for _, m in findings("hyperpod-dpd-hf-token", dev)] == [
        "hyperpod-dpd:endpoint.environmentVariables.HF_TOKEN holds a token in plaintext (it "
        "would sit in the manifest and the stack's state): remove HF_TOKEN from "
        "hyperpod-dpd:endpoint.environmentVariables and keep the token a secret: "
        "`pulumi config set --secret hyperpod-dpd:hfToken hf_...`",
    ]


def test_plaintext_hf_token_under_another_name_and_elsewhere(dev):
    set_env(dev, "MY_HUB_KEY", "hf_" + "b" * 34)
    named(dev, "checkpoint-job").props["metadata"]["labels"]["x"] = "hf_" + "c" * 30
    assert sorted(findings("hyperpod-dpd-hf-token", dev)) == [
        (
            named(dev, "checkpoint-job").urn,
            "checkpoint-job carries a Hugging Face token in plaintext; use `pulumi config set "
            "--secret hyperpod-dpd:hfToken hf_...`",
        ),
        (
            IEC_URN,
            "hyperpod-dpd:endpoint.environmentVariables.MY_HUB_KEY holds a token in plaintext (it "
            "would sit in the manifest and the stack's state): remove MY_HUB_KEY from "
            "hyperpod-dpd:endpoint.environmentVariables and keep the token a secret: "
            "`pulumi config set --secret hyperpod-dpd:hfToken hf_...`",
        ),
    ]


def test_a_token_inside_a_longer_value_is_found(dev):
    set_env(dev, "EXTRA_HEADERS", "Authorization: Bearer hf_" + "d" * 30)
    ((_, message),) = findings("hyperpod-dpd-hf-token", dev)
    assert message.startswith(
        "hyperpod-dpd:endpoint.environmentVariables.EXTRA_HEADERS holds a token"
    )
    iec_spec(dev)["worker"]["image"] = "registry.example/hf_" + "e" * 24 + "/vllm:1"
    assert len(findings("hyperpod-dpd-hf-token", dev)) == 2
