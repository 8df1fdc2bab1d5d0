"""A checkpoint per endpoint in the desired state: each distinct copy staged once by a Job of
its own under its own prefix, every reader granted each prefix, each IEC loading its own, the
stack's copy keeping its resources' names, and a copy kept while an endpoint still loads it."""

from __future__ import annotations

import json

from hyperpod_dpd.cli import main
from hyperpod_dpd.plan.summary import render_checkpoints
from settings import parse_settings
from specs.desired import desired_state
from tests.conftest import (
    NEW_REVISION,
    canary_raw,
    canary_revision_raw,
    edit,
    split_of,
    write_project,
)

NS = "hyperpod-dpd"
OLD = "models/meta-llama/Llama-3.3-70B-Instruct/6f6073b423013f6a7d4d9f39144961bfbfbc386b"
NEW = f"models/meta-llama/Llama-3.3-70B-Instruct/{NEW_REVISION}"


def _desired(raw):
    return desired_state(parse_settings(raw), NS, "canary")


def _dest(job) -> str:
    (container,) = job.props["spec"]["template"]["spec"]["containers"]
    script = container["command"][2]
    return script.split("'--dest' '", 1)[1].split("'", 1)[0]


def test_two_revisions_are_staged_by_two_jobs_under_their_own_prefixes():
    before, after = _desired(canary_raw()).staging, _desired(canary_revision_raw()).staging
    assert after.job == before.job  # the stack's copy: same resource, same Job
    first, second = after.jobs
    assert first.name == "checkpoint-job" and second.name.startswith("checkpoint-job-")
    assert _dest(first).endswith(f"/{OLD}") and _dest(second).endswith(f"/{NEW}")
    assert first.props["metadata"]["name"] != second.props["metadata"]["name"]
    write = json.loads(after.policy.props["policy"])["Statement"]
    (grant,) = [x for x in write if x["Sid"] == "WritePrefix"]
    assert [r.rsplit("/", 1)[0].split("/", 1)[1] for r in grant["Resource"]] == [OLD, NEW]


def test_every_reader_of_the_weights_may_read_each_copy_and_no_other_key():
    d = _desired(canary_revision_raw())
    for policy in (d.operator.s3_csi_policy, d.hyperpod.execution_s3):
        statements = json.loads(policy.props["policy"])["Statement"]
        (read,) = [x for x in statements if x["Sid"] == "ReadModelPrefix"]
        assert read["Resource"] == [f"${{models-bucket.arn}}/{p}/*" for p in (OLD, NEW)]
        (listing,) = [x for x in statements if x["Sid"] == "ListModelPrefix"]
        assert listing["Condition"]["StringLike"]["s3:prefix"] == [OLD, f"{OLD}/*", NEW, f"{NEW}/*"]


def test_each_iec_loads_its_own_checkpoint_s_prefix():
    locations = {
        spec.config.name: spec.iec.props["spec"]["modelSourceConfig"]["modelLocation"]
        for spec in _desired(canary_revision_raw()).endpoints
    }
    assert locations == {
        "baseline": OLD,
        "candidate": NEW,
    }


def test_a_copy_stays_staged_while_an_endpoint_loads_it():
    """Removing the candidate keeps the new revision's Job while colocated-2 still loads it;
    removing its last user drops only that Job (its objects stay: a Job deletes none), and the
    stack's own copy is never dropped."""
    raw = split_of(3)
    for key in ("candidate", "colocated-2"):
        edit(raw, f"{NS}:endpoints.{key}.checkpoint", {"revision": NEW_REVISION})
    both = _desired(raw).staging.jobs
    del raw[f"{NS}:endpoints"]["candidate"]
    raw[f"{NS}:traffic"] = {"baseline": 100, "colocated-2": 0}
    assert _desired(raw).staging.jobs == both
    del raw[f"{NS}:endpoints"]["colocated-2"]
    raw[f"{NS}:traffic"] = {"baseline": 100}
    assert _desired(raw).staging.jobs == both[:1]


def test_the_summary_says_which_endpoint_serves_which_revision():
    assert render_checkpoints(parse_settings(canary_raw())) == []  # one copy: nothing to say
    lines = render_checkpoints(parse_settings(canary_revision_raw()))
    assert f"| baseline | hf://meta-llama/Llama-3.3-70B-Instruct | {OLD.rsplit('/', 1)[1]} |" in (
        "\n".join(lines)
    )
    assert any(line.startswith("| candidate | ") and NEW_REVISION in line for line in lines)


def test_the_canary_with_a_new_revision_plans(tmp_path, capsys):
    project = write_project(tmp_path / "p", canary_revision_raw(), "canary")
    out = tmp_path / "o"
    code = main(["plan", "--stack", "canary", "--project-dir", str(project), "--out", str(out)])
    assert code == 0, capsys.readouterr()
    jobs = sorted(p.name for p in (out / "manifests").glob("job.*.yaml"))
    assert len(jobs) == 2, jobs
    summary = (out / "summary.md").read_text()
    assert "## Checkpoints" in summary and f"`{NEW}`" in summary
