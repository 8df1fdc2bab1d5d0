"""An endpoint's own checkpoint (endpoints.<key>.checkpoint): a canary serving a new revision
beside the old one, each endpoint's model judged against its own checkpoint, by key."""

from __future__ import annotations

from settings import parse_settings
from tests.conftest import NEW_REVISION, canary_raw, canary_revision_raw, edit, split_of
from tests.settings.problems import followed, only_problem

NS = "hyperpod-dpd"
OLD_REVISION = "6f6073b423013f6a7d4d9f39144961bfbfbc386b"
LLAMA_8B = "hf://meta-llama/Llama-3.1-8B-Instruct"
SHA_8B = "0e9e39f249a16976918f6564b8830bc894c89659"


def _by_key(s):
    return {x.key: s.checkpoint_of(x) for x in s.entries()}


def test_the_candidate_serves_its_own_revision_beside_the_baseline_s():
    s = parse_settings(canary_revision_raw())
    own = _by_key(s)
    assert own["baseline"] is s.checkpoint  # no checkpoint of its own: the stack's
    assert (own["candidate"].source, own["candidate"].revision) == (
        "hf://meta-llama/Llama-3.3-70B-Instruct",  # the stack's source, its own revision
        NEW_REVISION,
    )
    assert [c.effective_prefix for c in s.staged_checkpoints()] == [
        f"models/meta-llama/Llama-3.3-70B-Instruct/{OLD_REVISION}",
        f"models/meta-llama/Llama-3.3-70B-Instruct/{NEW_REVISION}",
    ]


def test_an_endpoint_naming_the_stack_s_own_checkpoint_adds_no_copy():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.checkpoint", {"revision": OLD_REVISION})
    s = parse_settings(raw)
    assert len(s.staged_checkpoints()) == 1
    assert s.checkpoint_of(s.entries()[1]) is s.checkpoint


def test_a_copy_two_endpoints_load_is_staged_once():
    raw = split_of(3)
    for key in ("candidate", "colocated-2"):
        edit(raw, f"{NS}:endpoints.{key}.checkpoint", {"revision": NEW_REVISION})
    assert len(parse_settings(raw).staged_checkpoints()) == 2


def test_an_endpoint_s_model_is_judged_against_its_own_checkpoint_by_key():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.checkpoint", {"source": LLAMA_8B, "revision": SHA_8B})
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.candidate.model: got 'llama-3.3-70b'")
    assert f"the model {NS}:endpoints.candidate.checkpoint.source stages" in message
    assert "meta-llama/Llama-3.1-8B-Instruct" in message


def test_an_endpoint_s_revision_is_checked_where_it_is_set():
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.checkpoint", {"revision": "main"})
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.candidate.checkpoint.revision: got 'main'")
    assert "40-hex commit SHA" in message


def test_two_models_each_over_its_own_checkpoint_are_fine():
    """Refused over the one checkpoint (tests/settings/test_pools.py), fine with two."""
    raw = canary_raw()
    edit(raw, f"{NS}:endpoints.candidate.model", "llama-3.1-8b")
    edit(raw, f"{NS}:endpoints.candidate.prefill.tensorParallelSize", 4)
    edit(raw, f"{NS}:endpoints.candidate.decode.tensorParallelSize", 4)
    assert f"the model {NS}:checkpoint.source stages" in only_problem(raw)
    edit(raw, f"{NS}:endpoints.candidate.checkpoint", {"source": LLAMA_8B, "revision": SHA_8B})
    s = parse_settings(raw)
    assert [c.source for c in s.staged_checkpoints()] == [
        "hf://meta-llama/Llama-3.3-70B-Instruct",
        LLAMA_8B,
    ]


def test_another_revision_on_the_stack_s_prefix_is_refused():
    """Its Job would overwrite the objects the baseline is serving."""
    raw = canary_raw()
    taken = f"models/meta-llama/Llama-3.3-70B-Instruct/{OLD_REVISION}"
    edit(
        raw,
        f"{NS}:endpoints.candidate.checkpoint",
        {"revision": NEW_REVISION, "prefix": taken},
    )
    message = only_problem(raw)
    assert message.startswith(f"{NS}:endpoints.candidate.checkpoint.prefix: got 'models/")
    assert f"{NS}:checkpoint.prefix holds" in message
    copies = parse_settings(followed(raw, message)).staged_checkpoints()
    assert copies[1].effective_prefix == f"models/meta-llama/Llama-3.3-70B-Instruct/{NEW_REVISION}"
