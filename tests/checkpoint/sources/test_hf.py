"""hf:// sources: end to end (huggingface_hub against a local fake Hub, into a local S3), and
the download's progress and disk-full error."""

from __future__ import annotations

import hashlib
import json

import pytest

from checkpoint import UploadOptions, upload_checkpoint
from tests.checkpoint.conftest import COMMIT, OLD_COMMIT, REGION, hub_model

PREFIX = f"models/acme/tiny-llm/{COMMIT}"
MANIFEST = f"{PREFIX}/.hyperpod-dpd-manifest.json"
SHARD1 = "model-00001-of-00002.safetensors"
SHA = "a" * 40
STAGED = {p: f for p, f in hub_model().items() if not p.startswith("original/")}


def upload(s3, bucket, tmp_path, *extra: str, source="hf://acme/tiny-llm", revision=COMMIT):
    stage = tmp_path / "stage"
    stage.mkdir(exist_ok=True)
    return [
        "upload",
        "--source",
        source,
        "--revision",
        revision,
        "--dest",
        f"s3://{bucket}/{PREFIX}",
        "--endpoint-url",
        s3.endpoint,
        "--region",
        REGION,
        "--tmp-dir",
        str(stage),
        "--part-size",
        "5MiB",
        "--exclude",
        "original/*",
        "--progress",
        "none",
        *extra,
    ]


def downloads(hub, mark: int) -> list[str]:
    return [
        r.path.split(f"/resolve/{COMMIT}/")[-1]
        for r in hub.since(mark)
        if r.method == "GET" and "/resolve/" in r.path and r.status in (200, 206)
    ]


def test_a_hub_model_is_staged_with_its_published_hashes_checked(
    hub_env, s3, s3_client, bucket, tmp_path, run_cli
):
    mark = hub_env.mark()
    code, _out, err = run_cli(*upload(s3, bucket, tmp_path))
    assert code == 0, err
    assert sorted(downloads(hub_env, mark)) == sorted(STAGED)  # each file once
    assert list((tmp_path / "stage").iterdir()) == []  # nothing left on local disk

    manifest = json.loads(s3_client.get_object(Bucket=bucket, Key=MANIFEST)["Body"].read())
    assert (manifest["source"], manifest["revision"]) == ("hf://acme/tiny-llm", COMMIT)
    assert manifest["exclude"] == ["original/*"]
    entries = {e["path"]: e for e in manifest["files"]}
    assert set(entries) == set(STAGED)
    for path, f in STAGED.items():
        body = s3_client.get_object(Bucket=bucket, Key=f"{PREFIX}/{path}")["Body"].read()
        assert body == f.data
        expected_sha = hashlib.sha256(f.data).hexdigest() if f.lfs else None
        assert entries[path]["sha256"] == expected_sha
        assert entries[path]["sourceId"] == (
            f"sha256:{expected_sha}" if f.lfs else f"git-sha1:{f.blob_id}"
        )
    assert (
        run_cli("verify", "--dest", f"s3://{bucket}/{PREFIX}", "--endpoint-url", s3.endpoint)[0]
        == 0
    )


def test_a_rerun_downloads_nothing_and_writes_nothing(hub_env, s3, bucket, tmp_path, run_cli):
    assert run_cli(*upload(s3, bucket, tmp_path))[0] == 0
    hub_mark, s3_mark = hub_env.mark(), s3.recorder.mark()
    code, out, err = run_cli(*upload(s3, bucket, tmp_path))
    assert code == 0, err
    assert downloads(hub_env, hub_mark) == []
    assert s3.recorder.writes(s3_mark, bucket) == []
    assert "kept 5 verified" in out


def test_a_new_revision_transfers_only_the_files_that_changed(
    hub_env, s3, s3_client, bucket, tmp_path, run_cli
):
    assert run_cli(*upload(s3, bucket, tmp_path, revision=OLD_COMMIT))[0] == 0
    hub_mark, s3_mark = hub_env.mark(), s3.recorder.mark()
    code, _, err = run_cli(*upload(s3, bucket, tmp_path))
    assert code == 0, err
    assert downloads(hub_env, hub_mark) == ["config.json"]
    written = [w.key for w in s3.recorder.writes(s3_mark, bucket) if w.op == "PutObject"]
    assert written == [f"{PREFIX}/config.json", MANIFEST]
    manifest = json.loads(s3_client.get_object(Bucket=bucket, Key=MANIFEST)["Body"].read())
    assert manifest["revision"] == COMMIT


def test_a_download_that_does_not_match_the_published_sha256_is_fetched_again(
    hub_env, s3, s3_client, bucket, tmp_path, run_cli
):
    hub_env.corrupt[("acme/tiny-llm", SHARD1)] = 1
    mark = hub_env.mark()
    code, _, err = run_cli(*upload(s3, bucket, tmp_path))
    assert code == 0, err
    assert f"retrying {SHARD1}" in err and "SHA-256" in err
    assert downloads(hub_env, mark).count(SHARD1) == 2
    body = s3_client.get_object(Bucket=bucket, Key=f"{PREFIX}/{SHARD1}")["Body"].read()
    assert body == STAGED[SHARD1].data


def test_a_file_that_never_matches_fails_without_a_manifest_and_the_rest_stays(
    hub_env, s3, s3_client, bucket, tmp_path, run_cli
):
    hub_env.corrupt[("acme/tiny-llm", SHARD1)] = 100
    code, _, err = run_cli(*upload(s3, bucket, tmp_path, "--concurrency", "1"))
    assert code == 1
    assert f"{SHARD1}: SHA-256" in err and "does not match" in err
    assert "no manifest was written" in err
    keys = {o["Key"] for o in s3_client.list_objects_v2(Bucket=bucket).get("Contents", [])}
    assert MANIFEST not in keys and f"{PREFIX}/{SHARD1}" not in keys

    hub_env.corrupt.clear()
    mark = s3.recorder.mark()
    assert run_cli(*upload(s3, bucket, tmp_path))[0] == 0
    written = {w.key for w in s3.recorder.writes(mark, bucket)}
    assert written == {f"{PREFIX}/{p}" for p in STAGED} - keys | {MANIFEST}


def test_an_object_rewritten_with_copied_metadata_is_redone(
    hub_env, s3, s3_client, bucket, tmp_path, run_cli
):
    assert run_cli(*upload(s3, bucket, tmp_path))[0] == 0
    key = f"{PREFIX}/tokenizer.json"
    meta = s3_client.head_object(Bucket=bucket, Key=key)["Metadata"]
    s3_client.put_object(
        Bucket=bucket,
        Key=key,
        Body=b"\0" * len(STAGED["tokenizer.json"].data),
        Metadata=meta,
        ChecksumAlgorithm="CRC64NVME",
    )
    mark = s3.recorder.mark()
    assert run_cli(*upload(s3, bucket, tmp_path))[0] == 0
    assert [w.key for w in s3.recorder.writes(mark, bucket) if w.op == "PutObject"] == [
        key,
        MANIFEST,
    ]
    assert (
        s3_client.get_object(Bucket=bucket, Key=key)["Body"].read() == STAGED["tokenizer.json"].data
    )


def test_a_gated_model_without_token_says_how_to_set_one(hub_env, s3, bucket, tmp_path, run_cli):
    mark = s3.recorder.mark()
    code, _, err = run_cli(*upload(s3, bucket, tmp_path, source="hf://acme/gated-llm"))
    assert code == 2
    assert "the model is gated and HF_TOKEN is not set" in err
    assert "pulumi config set --stack <stack> --secret hyperpod-dpd:hfToken" in err
    assert f"{hub_env.url}/acme/gated-llm" in err  # where to accept the terms
    assert s3.recorder.writes(mark, bucket) == []
    assert list((tmp_path / "stage").iterdir()) == []


def test_a_gated_model_with_a_token_without_access_is_told_apart(
    hub_env, s3, bucket, tmp_path, run_cli, monkeypatch
):
    monkeypatch.setenv("HF_TOKEN", "hf_not_granted")
    code, _, err = run_cli(*upload(s3, bucket, tmp_path, source="hf://acme/gated-llm"))
    assert code == 2
    assert "has not been granted access" in err


def test_a_gated_model_with_a_granted_token_is_staged(
    hub_env, s3, bucket, tmp_path, run_cli, monkeypatch
):
    monkeypatch.setenv("HF_TOKEN", "hf_granted")
    mark = hub_env.mark()
    code, _, err = run_cli(*upload(s3, bucket, tmp_path, source="hf://acme/gated-llm"))
    assert code == 0, err
    gets = [r for r in hub_env.since(mark) if r.method == "GET" and "/resolve/" in r.path]
    assert gets and all(r.authorized for r in gets)


def test_a_granted_token_in_the_file_hf_token_path_names_is_used(
    hub_env, s3, bucket, tmp_path, run_cli, monkeypatch
):
    """The staging Job mounts the token as a file (specs/staging.py), never as HF_TOKEN."""
    token_file = tmp_path / "token"
    token_file.write_text("hf_granted\n")
    monkeypatch.setenv("HF_TOKEN_PATH", str(token_file))
    mark = hub_env.mark()
    code, _, err = run_cli(*upload(s3, bucket, tmp_path, source="hf://acme/gated-llm"))
    assert code == 0, err
    gets = [r for r in hub_env.since(mark) if r.method == "GET" and "/resolve/" in r.path]
    assert gets and all(r.authorized for r in gets)


def test_a_token_file_without_access_is_told_apart_from_no_token(
    hub_env, s3, bucket, tmp_path, run_cli, monkeypatch
):
    token_file = tmp_path / "token"
    token_file.write_text("hf_not_granted")
    monkeypatch.setenv("HF_TOKEN_PATH", str(token_file))
    code, _, err = run_cli(*upload(s3, bucket, tmp_path, source="hf://acme/gated-llm"))
    assert code == 2
    assert "has not been granted access" in err
    assert "HF_TOKEN is not set" not in err


@pytest.mark.parametrize(
    ("source", "revision", "message"),
    [
        (
            "hf://acme/tiny-llm",
            "f" * 40,
            f"--revision {'f' * 40} does not exist in acme/tiny-llm: use a commit SHA listed at",
        ),
        ("hf://acme/no-such-model", COMMIT, "model acme/no-such-model was not found on"),
        (
            "hf://acme/tiny-llm",
            "main",
            f"(got 'main'): a pinned commit keeps the staged files from changing under a deployed "
            f"endpoint; acme/tiny-llm main is at {COMMIT} now: rerun with --revision {COMMIT}",
        ),
        ("hf://acme/tiny-llm@main", COMMIT, "give the revision with --revision, not after '@'"),
    ],
)
def test_unknown_models_and_revisions_are_clear_errors(
    source, revision, message, hub_env, s3, bucket, tmp_path, run_cli
):
    code, _, err = run_cli(*upload(s3, bucket, tmp_path, source=source, revision=revision))
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_local_disk_is_bounded_by_tmp_limit(hub_env, s3, bucket, tmp_path, run_cli):
    biggest = max(len(f.data) for f in STAGED.values())
    code, _, err = run_cli(*upload(s3, bucket, tmp_path, "--tmp-limit", str(biggest - 1)))
    assert code == 1
    assert f"{SHARD1} is 6.0 MiB, more than the" in err and "--tmp-limit" in err
    assert list((tmp_path / "stage").iterdir()) == []  # refused before any download

    stage = tmp_path / "stage"
    result = upload_checkpoint(
        "hf://acme/tiny-llm",
        f"s3://{bucket}/{PREFIX}",
        revision=COMMIT,
        options=UploadOptions(
            region=REGION,
            endpoint_url=s3.endpoint,
            tmp_dir=stage,
            tmp_limit=biggest,
            exclude=("original/*",),
            progress="none",
        ),
        log=lambda message: None,
    )
    assert result.manifest_written
    assert 0 < result.peak_tmp_bytes <= biggest  # downloads waited for room, one at a time


def test_hub_progress_is_forwarded_from_both_download_paths_of_huggingface_hub():
    """huggingface_hub's plain HTTP path and its Xet path drive the bar class we hand it."""
    import logging
    from types import SimpleNamespace

    from huggingface_hub.utils._xet_progress_reporting import XetDownloadProgressReporter
    from huggingface_hub.utils.tqdm import _get_progress_bar_context

    from checkpoint.sources.hf import _forwarding_bar

    got: list[int] = []
    bar_class = _forwarding_bar(got.append)
    with _get_progress_bar_context(
        desc="model.safetensors", log_level=logging.INFO, total=100, tqdm_class=bar_class
    ) as bar:
        bar.update(60)
        bar.update(40)
    assert got == [60, 40]

    got.clear()
    with XetDownloadProgressReporter(
        reconstruction_desc="model.safetensors: reconstructing file",
        transfer_desc="model.safetensors: downloading bytes",
        total=100,
        log_level=logging.INFO,
        tqdm_class=bar_class,
    ) as reporter:
        for written, received in ((40, 30), (100, 70)):
            reporter.update_progress(
                SimpleNamespace(
                    total_bytes_completed=written,
                    total_transfer_bytes_completed=received,
                    total_bytes_completion_rate=1.0,
                    total_transfer_bytes_completion_rate=1.0,
                    total_bytes=100,
                )
            )
    assert got == [40, 60]  # bytes of the file, not the (compressed) bytes on the wire


def test_disk_full_while_downloading_names_the_directory_and_the_flag(tmp_path):
    import errno

    from checkpoint.errors import DiskFullError
    from checkpoint.sources.hf import HfSource

    source = HfSource("acme/tiny-llm", SHA, endpoint="http://127.0.0.1:9")
    exc = OSError(errno.ENOSPC, "No space left on device")
    error = source.error(exc, "download from", "model.safetensors", tmp_path)
    assert isinstance(error, DiskFullError) and error.exit_code == 1
    assert f"disk full in {tmp_path} while downloading acme/tiny-llm/model.safetensors" in str(
        error
    )
    assert "--tmp-dir" in str(error)
