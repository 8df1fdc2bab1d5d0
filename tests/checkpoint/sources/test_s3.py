"""s3:// sources: copied server-side, checksums and revision carried over from their manifest."""

from __future__ import annotations

import json

from tests.checkpoint.conftest import COMMIT, REGION
from tests.checkpoint.sources.test_hf import STAGED
from tests.checkpoint.sources.test_hf import upload as hf_upload

SRC_PREFIX = f"models/acme/tiny-llm/{COMMIT}"
DEST_PREFIX = "copies/tiny-llm"
DEST_MANIFEST = f"{DEST_PREFIX}/.hyperpod-dpd-manifest.json"


def test_s3_to_s3_is_a_server_side_copy_and_a_rerun_is_a_noop(
    hub_env, s3, s3_client, bucket, tmp_path, run_cli
):
    assert run_cli(*hf_upload(s3, bucket, tmp_path))[0] == 0  # a staged Hub model as the source
    dest_bucket = f"{bucket}-copy"
    s3_client.create_bucket(
        Bucket=dest_bucket, CreateBucketConfiguration={"LocationConstraint": REGION}
    )
    args = [
        "upload",
        "--source",
        f"s3://{bucket}/{SRC_PREFIX}",
        "--dest",
        f"s3://{dest_bucket}/{DEST_PREFIX}",
        "--endpoint-url",
        s3.endpoint,
        "--region",
        REGION,
        "--part-size",
        "5MiB",
        "--progress",
        "none",
    ]
    mark = s3.recorder.mark()
    code, _, err = run_cli(*args)
    assert code == 0, err

    source_reads = [r for r in s3.recorder.since(mark, bucket) if r.op == "GetObject"]
    assert [r.key for r in source_reads] == [f"{SRC_PREFIX}/.hyperpod-dpd-manifest.json"]
    ops = {(w.op, w.key.rsplit("/", 1)[-1]) for w in s3.recorder.writes(mark, dest_bucket)}
    assert ("CopyObject", "config.json") in ops
    assert ("UploadPartCopy", "model-00001-of-00002.safetensors") in ops  # multipart copy

    for path, f in STAGED.items():
        body = s3_client.get_object(Bucket=dest_bucket, Key=f"{DEST_PREFIX}/{path}")["Body"].read()
        assert body == f.data
    manifest = json.loads(
        s3_client.get_object(Bucket=dest_bucket, Key=DEST_MANIFEST)["Body"].read()
    )
    assert manifest["source"] == f"s3://{bucket}/{SRC_PREFIX}"
    assert manifest["revision"] == COMMIT  # from the source's manifest
    shard = next(e for e in manifest["files"] if e["path"] == "model-00002-of-00002.safetensors")
    assert shard["sha256"] == STAGED["model-00002-of-00002.safetensors"].sha256

    mark = s3.recorder.mark()
    code, out, err = run_cli(*args)
    assert code == 0, err
    assert s3.recorder.writes(mark, dest_bucket) == []
    assert "kept 5 verified" in out
    verify = [
        "verify",
        "--dest",
        f"s3://{dest_bucket}/{DEST_PREFIX}",
        "--endpoint-url",
        s3.endpoint,
    ]
    assert run_cli(*verify)[0] == 0
