"""The staging Job's spec: a change of the staging code changes the ConfigMap, never the Job."""

from __future__ import annotations

import pytest

from settings import parse_settings
from specs import staging
from tests.conftest import stack_raw


def _spec():
    return staging.staging(
        "checkpoint", parse_settings(stack_raw("dev")), "${b.bucket}", "${b.arn}", None
    )


def test_a_new_code_file_changes_the_config_map_but_not_the_job(monkeypatch):
    before = _spec()
    files = staging.code_files()
    monkeypatch.setattr(staging, "code_files", lambda: {**files, "checkpoint-new.py": "x = 1\n"})
    after = _spec()
    assert after.job == before.job  # a Job's template is immutable: it would be replaced
    assert after.code != before.code
    assert after.code.props["data"]["checkpoint-new.py"] == "x = 1\n"


def test_the_job_lays_out_and_runs_the_shipped_program():
    (container,) = _spec().job.props["spec"]["template"]["spec"]["containers"]
    script = container["command"][2]
    assert staging.unpack_command() in script
    assert script.index(staging.unpack_command()) < script.index("exec 'python' '-m' 'checkpoint'")
    assert {"name": "code", "mountPath": "/code", "readOnly": True} in container["volumeMounts"]


def test_the_whole_package_tree_is_shipped_and_each_key_unpacks_to_its_path():
    paths = staging.shipped_paths()
    package = sorted(
        p.relative_to(staging.ROOT).as_posix() for p in (staging.ROOT / "checkpoint").rglob("*.py")
    )
    assert set(package) <= set(paths)
    assert {
        "checkpoint/__main__.py",
        "checkpoint/s3/__init__.py",
        "checkpoint/s3/client.py",
    } <= set(paths)
    for path in paths:
        assert "-" not in path  # the unpack loop turns every '-' of a key back into '/'
        assert staging.config_map_key(path).replace("-", "/") == path
    assert set(staging.code_files()) == {staging.config_map_key(p) for p in paths}


def test_a_shipped_path_with_a_dash_is_refused():
    with pytest.raises(ValueError, match="no '-'"):
        staging.config_map_key("checkpoint/s3-extra/client.py")


def test_the_job_runs_as_non_root_and_writes_only_to_its_volumes():
    pod = _spec().job.props["spec"]["template"]["spec"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }  # fmt: skip
    (container,) = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
    }  # fmt: skip
    # With a read-only root, every place it writes is an emptyDir: HOME (pip's --user site),
    # TMPDIR, the unpacked program and the Hub files' staging directory (--tmp-dir).
    empty_dirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    writable = [m["mountPath"] for m in container["volumeMounts"] if m["name"] in empty_dirs]
    env = {e["name"]: e.get("value") for e in container["env"]}
    script = container["command"][2]
    tmp_dir = script.split("'--tmp-dir' '", 1)[1].split("'", 1)[0]
    for path in (env["HOME"], env["TMPDIR"], staging.APP_DIR, tmp_dir):
        assert any(path == m or path.startswith(f"{m}/") for m in writable), path
    assert "pip install --user " in script
    # The volumes fill up together within the container's limit (over it, the pod is evicted).
    sizes = [
        int(v["emptyDir"]["sizeLimit"].removesuffix("Gi"))
        for v in pod["volumes"]
        if "emptyDir" in v
    ]
    assert sum(sizes) <= int(
        container["resources"]["limits"]["ephemeral-storage"].removesuffix("Gi")
    )


def test_the_pins_change_the_config_map_but_not_the_job(monkeypatch):
    before = _spec()
    monkeypatch.setattr(staging, "requirements_text", lambda: "boto3==9 --hash=sha256:" + "0" * 64)
    after = _spec()
    assert after.job == before.job
    assert after.code.props["data"]["requirements.txt"].startswith("boto3==9 ")


def test_the_lock_holds_the_pinned_packages_and_what_they_need():
    from hyperpod_dpd.shared.venvs import requirement_set

    pins = requirement_set(staging.requirements_text())
    for package in staging.PIP_PACKAGES:  # 'boto3[crt]==1.44.8': the [crt] extra is awscrt
        name, version = package.split("==")
        assert f"{name.split('[')[0].replace('_', '-')}=={version}" in pins
    assert any(p.startswith("awscrt==") for p in pins)
    assert any(p.startswith("botocore==") for p in pins)


def test_a_private_clusters_image_and_mirror_reach_the_job():
    raw = stack_raw("dev")
    mirror, image = "https://pypi.internal/simple", "registry.internal/python:3.11-slim"
    raw["hyperpod-dpd:jobs"] = {"image": image, "pipIndexUrl": mirror}
    spec = staging.staging("checkpoint", parse_settings(raw), "${b.bucket}", "${b.arn}", None)
    (container,) = spec.job.props["spec"]["template"]["spec"]["containers"]
    assert container["image"] == image
    assert {"name": "PIP_INDEX_URL", "value": mirror} in container["env"]
    # Unset, the Job is the one it always was: a Job's template change replaces it.
    (default,) = _spec().job.props["spec"]["template"]["spec"]["containers"]
    assert not any(e["name"] == "PIP_INDEX_URL" for e in default["env"])
