"""`hyperpod-dpd checkpoint upload|verify` from a local directory to a real local S3 endpoint."""

from __future__ import annotations

import json

import boto3
import pytest
from awscrt import checksums

from checkpoint.hashing import crc64nvme_b64
from tests.checkpoint.conftest import upload_args, write_checkpoint
from tests.checkpoint.s3server import Fault
from tests.support.json_style import style_problems

PREFIX = "models/tiny"
MANIFEST = f"{PREFIX}/.hyperpod-dpd-manifest.json"
SHARD1 = f"{PREFIX}/model-00001-of-00002.safetensors"
SHARD2 = f"{PREFIX}/model-00002-of-00002.safetensors"


def upload(src, bucket, s3, *extra: str) -> list[str]:
    return upload_args(
        src, f"s3://{bucket}/{PREFIX}", s3, "--part-size", "5MiB", "--progress", "none", *extra
    )


def verify(bucket, s3, *extra: str) -> list[str]:
    return ["verify", "--dest", f"s3://{bucket}/{PREFIX}", "--endpoint-url", s3.endpoint, *extra]


def stored(client, bucket: str) -> dict[str, bytes]:
    listed = client.list_objects_v2(Bucket=bucket, Prefix=f"{PREFIX}/").get("Contents", [])
    return {o["Key"]: client.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}


def crc(data: bytes) -> str:
    return crc64nvme_b64(checksums.crc64nvme(data))


@pytest.mark.parametrize("transfer_client", ["crt", "classic"])
def test_upload_stores_every_file_verified_and_writes_the_manifest_last(
    transfer_client, s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    mark = s3.recorder.mark()
    code, out, err = run_cli(
        *upload(src, bucket, s3, "--transfer-client", transfer_client, "--format", "json")
    )
    assert code == 0, err
    assert json.loads(out)["transferClient"] == transfer_client

    objects = stored(s3_client, bucket)
    manifest = json.loads(objects.pop(MANIFEST))
    assert objects == {f"{PREFIX}/{path}": data for path, data in contents.items()}
    assert manifest["format"] == "hyperpod-dpd/checkpoint-manifest/v1"
    assert manifest["source"] == str(src.resolve())
    assert manifest["totalBytes"] == sum(len(d) for d in contents.values())
    for entry in manifest["files"]:
        data = contents[entry["path"]]
        assert entry["size"] == len(data)
        assert entry["crc64nvme"] == crc(data)
        head = s3_client.head_object(
            Bucket=bucket, Key=f"{PREFIX}/{entry['path']}", ChecksumMode="ENABLED"
        )
        assert head["ChecksumCRC64NVME"] == crc(data)  # S3's own checksum of the object
        assert entry["versionId"] == head["VersionId"]

    writes = s3.recorder.writes(mark, bucket)
    assert [(w.op, w.key) for w in writes if w.key == MANIFEST] == [("PutObject", MANIFEST)]
    assert writes[-1].key == MANIFEST  # the manifest is the last object written
    assert {"CreateMultipartUpload", "CompleteMultipartUpload"} <= {
        w.op for w in writes if w.key == SHARD1
    }
    assert sum(w.op == "UploadPart" for w in writes if w.key == SHARD1) == 2


def test_rerun_with_everything_in_place_writes_nothing(s3, bucket, local_checkpoint, run_cli):
    src, _ = local_checkpoint
    assert run_cli(*upload(src, bucket, s3))[0] == 0
    mark = s3.recorder.mark()
    code, out, err = run_cli(*upload(src, bucket, s3))
    assert code == 0, err
    assert s3.recorder.writes(mark, bucket) == []
    assert not any(r.op.startswith("Delete") for r in s3.recorder.since(mark, bucket))
    assert "transferred 0 files" in out and "kept 5 verified" in out
    assert "unchanged" in out


def test_tampered_object_fails_verify_by_name_and_upload_redoes_only_it(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    assert run_cli(*upload(src, bucket, s3))[0] == 0
    assert run_cli(*verify(bucket, s3))[0] == 0
    original = contents["model-00002-of-00002.safetensors"]
    s3_client.put_object(Bucket=bucket, Key=SHARD2, Body=b"\0" * len(original))

    code, _out, err = run_cli(*verify(bucket, s3))
    assert code == 1
    assert f"{SHARD2}:" in err and "1 objects do not match" in err
    assert SHARD1 not in err

    mark = s3.recorder.mark()
    code, _, err = run_cli(*upload(src, bucket, s3))
    assert code == 0, err
    requests = s3.recorder.since(mark, bucket)
    writes = [(r.op, r.key) for r in requests if r.op in ("PutObject", "DeleteObject")]
    # The stale manifest goes first, the object is redone, the manifest comes back last.
    assert writes == [("DeleteObject", MANIFEST), ("PutObject", SHARD2), ("PutObject", MANIFEST)]
    assert s3.recorder.writes(mark, bucket)[-1].key == MANIFEST
    assert s3_client.get_object(Bucket=bucket, Key=SHARD2)["Body"].read() == original
    assert run_cli(*verify(bucket, s3))[0] == 0


def test_deep_verify_reads_the_bytes_a_head_cannot_see(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    assert run_cli(*upload(src, bucket, s3))[0] == 0
    good = contents["tokenizer.json"]
    # Same size, and S3 made to hold the old checksum: only the bytes tell (bit rot, a store
    # that does not validate checksums).
    s3_client.put_object(
        Bucket=bucket,
        Key=f"{PREFIX}/tokenizer.json",
        Body=bytes([good[0] ^ 1]) + good[1:],
        ChecksumAlgorithm="CRC64NVME",
        ChecksumCRC64NVME=crc(good),
    )
    assert run_cli(*verify(bucket, s3))[0] == 0
    code, _, err = run_cli(*verify(bucket, s3, "--deep"))
    assert code == 1
    assert f"{PREFIX}/tokenizer.json:" in err


def test_a_body_cut_short_in_transit_is_detected_and_sent_again(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    key = f"{PREFIX}/tokenizer.json"
    s3.recorder.add_fault(Fault("PutObject", bucket, key, truncate=True))
    mark = s3.recorder.mark()
    code, _, err = run_cli(*upload(src, bucket, s3, "--transfer-client", "classic"))
    assert code == 0, err
    assert "retrying tokenizer.json" in err
    assert [w.op for w in s3.recorder.writes(mark, bucket) if w.key == key] == ["PutObject"] * 2
    assert s3_client.get_object(Bucket=bucket, Key=key)["Body"].read() == contents["tokenizer.json"]


@pytest.mark.parametrize("transfer_client", ["crt", "classic"])
def test_throttling_and_server_errors_are_retried(
    transfer_client, s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    s3.recorder.add_fault(Fault("UploadPart", bucket, SHARD1, times=2, status=503, code="SlowDown"))
    s3.recorder.add_fault(
        Fault("PutObject", bucket, SHARD2, times=1, status=500, code="InternalError")
    )
    mark = s3.recorder.mark()
    code, _, err = run_cli(*upload(src, bucket, s3, "--transfer-client", transfer_client))
    assert code == 0, err
    statuses = [(r.op, r.key, r.status) for r in s3.recorder.since(mark, bucket)]
    assert statuses.count(("UploadPart", SHARD1, 503)) == 2
    assert ("PutObject", SHARD2, 500) in statuses
    objects = stored(s3_client, bucket)
    assert objects[SHARD1] == contents["model-00001-of-00002.safetensors"]
    assert objects[SHARD2] == contents["model-00002-of-00002.safetensors"]
    assert MANIFEST in objects


def test_no_write_permission_is_a_clear_error_and_no_manifest(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, _ = local_checkpoint
    for op in ("PutObject", "CreateMultipartUpload"):
        s3.recorder.add_fault(Fault(op, bucket, times=100, status=403, code="AccessDenied"))
    code, _, err = run_cli(*upload(src, bucket, s3, "--transfer-client", "classic"))
    assert code == 2
    assert "error: no permission to upload to s3://" in err and "s3:PutObject" in err
    assert "no manifest was written" in err
    assert "Traceback" not in err
    assert MANIFEST not in stored(s3_client, bucket)


def test_a_failed_run_keeps_what_it_verified_and_the_rerun_does_the_rest(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    s3.recorder.add_fault(
        Fault("CreateMultipartUpload", bucket, SHARD1, status=403, code="AccessDenied")
    )
    code, _, err = run_cli(
        *upload(src, bucket, s3, "--concurrency", "1", "--transfer-client", "classic")
    )
    assert code == 2, err
    first = stored(s3_client, bucket)
    assert MANIFEST not in first and SHARD1 not in first
    for key, data in first.items():  # whatever landed is complete and right
        assert data == contents[key.removeprefix(f"{PREFIX}/")]

    mark = s3.recorder.mark()
    assert run_cli(*upload(src, bucket, s3))[0] == 0
    redone = {w.key for w in s3.recorder.writes(mark, bucket)}
    assert redone == {f"{PREFIX}/{p}" for p in contents} - set(first) | {MANIFEST}
    assert run_cli(*verify(bucket, s3))[0] == 0


def test_a_bucket_in_another_region_is_refused(s3, local_checkpoint, run_cli):
    eu = boto3.client("s3", endpoint_url=s3.endpoint, region_name="eu-west-1")
    eu.create_bucket(
        Bucket="ckpt-eu", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
    )
    src, _ = local_checkpoint
    mark = s3.recorder.mark()
    code, _, err = run_cli(*upload(src, "ckpt-eu", s3))
    assert code == 2
    assert "bucket ckpt-eu is in eu-west-1, the cluster in us-east-2" in err
    assert s3.recorder.writes(mark, "ckpt-eu") == []


def test_a_missing_bucket_is_named(s3, local_checkpoint, run_cli):
    src, _ = local_checkpoint
    code, _, err = run_cli(*upload(src, "no-such-bucket-here", s3))
    assert code == 2
    assert "bucket no-such-bucket-here (--dest) does not exist" in err


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"--dest": "bucket/prefix"},
            "--dest 'bucket/prefix' must be an S3 URI: s3://BUCKET/PREFIX",
        ),
        ({"--dest": "s3://Bad_Bucket/x"}, "is not a valid bucket name"),
        ({"--source": "ftp://host/model"}, "unknown scheme; use hf://ORG/NAME"),
        ({"--source": "/no/such/dir"}, "--source /no/such/dir: no such directory"),
        ({"--part-size": "1MiB"}, "S3 parts must be 5 MiB to 5 GiB"),
        ({"--source": "hf://acme/model", "--revision": "main"}, "must be a full 40-hex commit SHA"),
    ],
)
def test_bad_input_exits_2_naming_the_flag(change, message, s3, bucket, local_checkpoint, run_cli):
    src, _ = local_checkpoint
    args = upload(src, bucket, s3)
    for flag, value in change.items():
        if flag in args:
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    code, _, err = run_cli(*args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_unparsable_sizes_are_refused_by_argparse(s3, bucket, local_checkpoint, run_cli, capsys):
    src, _ = local_checkpoint
    with pytest.raises(SystemExit) as exit_info:
        run_cli(*upload(src, bucket, s3, "--tmp-limit", "lots"))
    assert exit_info.value.code == 2
    assert "argument --tmp-limit: 'lots'" in capsys.readouterr().err


def test_objects_outside_the_checkpoint_are_reported_and_deleted_on_request(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, _ = local_checkpoint
    stale = f"{PREFIX}/model-00003-of-00003.safetensors"
    s3_client.put_object(Bucket=bucket, Key=stale, Body=b"old shard")
    code, _, err = run_cli(*upload(src, bucket, s3))
    assert code == 0
    assert "1 objects under" in err and stale in err and "--delete-extra" in err
    assert stale in stored(s3_client, bucket)

    code, _, err = run_cli(*upload(src, bucket, s3, "--delete-extra"))
    assert code == 0, err
    assert stale not in stored(s3_client, bucket)
    assert run_cli(*verify(bucket, s3))[0] == 0


def test_dry_run_tells_and_writes_nothing(s3, bucket, local_checkpoint, run_cli):
    src, contents = local_checkpoint
    mark = s3.recorder.mark()
    code, out, _ = run_cli(*upload(src, bucket, s3, "--dry-run", "--format", "json"))
    assert code == 0
    assert sorted(json.loads(out)["transferred"]) == sorted(contents)
    assert s3.recorder.writes(mark, bucket) == []


def test_verify_without_a_manifest_says_the_checkpoint_is_incomplete(s3, bucket, run_cli):
    code, _, err = run_cli(*verify(bucket, s3))
    assert code == 1
    assert f"no manifest at s3://{bucket}/{MANIFEST}" in err and "incomplete" in err


@pytest.mark.parametrize("transfer_client", ["crt", "classic"])
def test_files_around_the_part_size_get_a_full_object_checksum(
    transfer_client, s3, s3_client, bucket, tmp_path, run_cli
):
    # Up to exactly --part-size: one PutObject (for both clients); above it: multipart. Either
    # way S3 must end up holding the object's CRC64NVME.
    part = 5 * 2**20
    sizes = {f"f-{n}": n for n in (0, part - 1, part, part + 1)}
    contents = write_checkpoint(tmp_path / "edge", sizes)
    mark = s3.recorder.mark()
    code, _, err = run_cli(
        *upload(tmp_path / "edge", bucket, s3, "--transfer-client", transfer_client)
    )
    assert code == 0, err
    first_write = {}
    for w in s3.recorder.writes(mark, bucket):
        first_write.setdefault(w.key.rsplit("/", 1)[-1], w.op)
    assert first_write[f"f-{part}"] == "PutObject"
    assert first_write[f"f-{part + 1}"] == "CreateMultipartUpload"
    for name, data in contents.items():
        head = s3_client.head_object(Bucket=bucket, Key=f"{PREFIX}/{name}", ChecksumMode="ENABLED")
        assert head["ChecksumCRC64NVME"] == crc(data)


def test_upload_and_verify_print_json_in_the_commands_one_style(
    s3, bucket, local_checkpoint, run_cli, capsys
):
    """`--format json` of checkpoint upload and verify: camelCase, rounded, as every command's
    (tests/hyperpod_dpd/cli/test_json_outputs.py); --json, the older spelling, still works."""
    src, _ = local_checkpoint
    code, out, _ = run_cli(*upload(src, bucket, s3, "--format", "json"))
    assert code == 0 and style_problems(json.loads(out)) == []
    code, out, err = run_cli(*verify(bucket, s3, "--format", "json"))
    assert code == 0 and style_problems(json.loads(out)) == []
    code, out, err = run_cli(*verify(bucket, s3, "--json"))
    assert code == 0 and json.loads(out)["ok"] is True
    assert "--json is deprecated: use --format json" in err
