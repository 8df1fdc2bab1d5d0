"""What a killed run leaves cannot break the next one: multipart uploads S3 no longer knows,
parts already in S3 (kept only when verified), temp files, half-written caches, staging dirs."""

from __future__ import annotations

import fcntl
import os
import time

import boto3
import pytest
from botocore.stub import Stubber

from checkpoint import checksum_cache
from checkpoint.checksum_cache import ChecksumCache
from checkpoint.hashing import crc64nvme_of
from checkpoint.s3.destination import META_CRC64NVME, META_SOURCE_ID, Destination
from checkpoint.s3.resume import resume_upload
from checkpoint.s3.uri import S3Location
from checkpoint.upload import workdir
from tests.checkpoint.conftest import MiB, upload_args
from tests.checkpoint.s3server import Fault

PREFIX = "models/idem"
BIG = "model-00001-of-00002.safetensors"  # 6 MiB + 123: two parts of 5 MiB
PART = 5 * MiB


def test_abort_of_an_upload_s3_no_longer_knows_is_not_an_error():
    client = boto3.client("s3", region_name="us-east-2")
    with Stubber(client) as stub:
        stub.add_response(
            "list_multipart_uploads",
            {"Uploads": [{"Key": "p/a", "UploadId": "u1"}], "IsTruncated": False},
            {"Bucket": "bkt", "Prefix": "p/"},
        )
        stub.add_client_error(
            "abort_multipart_upload", "NoSuchUpload", "gone", 404, expected_params=None
        )
        assert Destination(client, S3Location("bkt", "p")).abort_incomplete_uploads() == 0
        stub.assert_no_pending_responses()


def test_list_parts_of_an_upload_s3_no_longer_knows_means_upload_anew(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    client = boto3.client("s3", region_name="us-east-2")
    with Stubber(client) as stub:
        stub.add_client_error("list_parts", "NoSuchUpload", "gone", 404, expected_params=None)
        resumed = resume_upload(
            client, path, "bkt", "p/f", "u1", part_size=PART, concurrency=2, on_bytes=len
        )
    assert resumed is None


def start_upload(s3_client, bucket, key, data: bytes, *, metadata_crc: str | None = None):
    """An incomplete upload as a killed run leaves it, with our metadata for `data`."""
    crc = metadata_crc or crc64nvme_of(data)
    return s3_client.create_multipart_upload(
        Bucket=bucket,
        Key=key,
        ChecksumAlgorithm="CRC64NVME",
        Metadata={META_SOURCE_ID: f"crc64nvme:{crc}", META_CRC64NVME: crc},
    )["UploadId"]


def put_part(s3_client, bucket, key, upload_id, number: int, data: bytes) -> None:
    s3_client.upload_part(
        Bucket=bucket,
        Key=key,
        UploadId=upload_id,
        PartNumber=number,
        Body=data,
        ChecksumAlgorithm="CRC64NVME",
    )


def interrupted(s3_client, bucket, contents, first_part=None, metadata_crc=None) -> str:
    """The big file's key, whose upload a killed run left with its first part sent."""
    key = f"{PREFIX}/{BIG}"
    upload_id = start_upload(s3_client, bucket, key, contents[BIG], metadata_crc=metadata_crc)
    first = contents[BIG][:PART] if first_part is None else first_part
    put_part(s3_client, bucket, key, upload_id, 1, first)
    return key


def ops_on(s3, bucket: str, key: str, mark: int) -> list[str]:
    return [w.op for w in s3.recorder.writes(mark, bucket) if w.key == key]


def rerun(run_cli, src, bucket, s3):
    mark = s3.recorder.mark()
    dest = f"s3://{bucket}/{PREFIX}"
    code, _, err = run_cli(*upload_args(src, dest, s3, "--part-size", "5MiB"))
    assert code == 0, err
    code, _, verr = run_cli("verify", "--dest", dest, "--endpoint-url", s3.endpoint)
    assert code == 0, verr
    return mark, err


def test_a_rerun_whose_stale_upload_is_already_gone_finishes(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    """The issue's case: an upload listed, gone when aborted (NoSuchUpload)."""
    src, contents = local_checkpoint
    code, _, err = run_cli(*upload_args(src, f"s3://{bucket}/{PREFIX}", s3))
    assert code == 0, err
    start_upload(s3_client, bucket, f"{PREFIX}/config.json", contents["config.json"])
    s3.recorder.add_fault(
        Fault("AbortMultipartUpload", bucket, status=404, code="NoSuchUpload", times=5)
    )
    s3_client.delete_object(Bucket=bucket, Key=f"{PREFIX}/tokenizer.json")
    rerun(run_cli, src, bucket, s3)


def test_parts_already_in_s3_and_verified_are_not_sent_again(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    key = interrupted(s3_client, bucket, contents)
    mark, err = rerun(run_cli, src, bucket, s3)
    ops = ops_on(s3, bucket, key, mark)
    assert ops == ["UploadPart", "CompleteMultipartUpload"], ops
    assert f"resumed the upload of {BIG}: 1 of 2 parts" in err
    assert s3_client.get_object(Bucket=bucket, Key=key)["Body"].read() == contents[BIG]
    assert s3_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_a_part_that_does_not_hold_the_files_bytes_is_sent_again(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    key = interrupted(s3_client, bucket, contents, first_part=b"\0" * PART)
    mark, _ = rerun(run_cli, src, bucket, s3)
    ops = ops_on(s3, bucket, key, mark)
    assert ops.count("UploadPart") == 2, ops
    assert s3_client.get_object(Bucket=bucket, Key=key)["Body"].read() == contents[BIG]


def test_list_parts_of_an_upload_gone_meanwhile_uploads_the_file_anew(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    src, contents = local_checkpoint
    key = interrupted(s3_client, bucket, contents)
    gone = s3.recorder.add_fault(
        Fault("ListParts", bucket, key=key, status=404, code="NoSuchUpload")
    )
    rerun(run_cli, src, bucket, s3)
    assert gone.times == 0  # asked, told it is gone, uploaded anew
    assert s3_client.get_object(Bucket=bucket, Key=key)["Body"].read() == contents[BIG]


def test_an_upload_started_for_an_earlier_version_of_the_file_is_not_kept(
    s3, s3_client, bucket, local_checkpoint, run_cli
):
    """Same parts, other metadata (the file changed after its first part was sent)."""
    src, contents = local_checkpoint
    key = interrupted(s3_client, bucket, contents, metadata_crc="AAAAAAAAAAA=")
    rerun(run_cli, src, bucket, s3)
    head = s3_client.head_object(Bucket=bucket, Key=key)
    assert head["Metadata"][META_CRC64NVME] == crc64nvme_of(contents[BIG])


@pytest.mark.parametrize("cut", ["half", "deep"])
def test_a_cache_file_cut_short_or_unreadable_is_ignored_and_replaced(tmp_path, monkeypatch, cut):
    monkeypatch.setattr(checksum_cache, "RACY_WINDOW_NS", 0)
    files = []
    for i in range(20):
        files.append(tmp_path / f"shard-{i}")
        files[-1].write_bytes(bytes([i]) * 1000)
    first = ChecksumCache.for_source(tmp_path, enabled=True, log=lambda _: None)
    for path in files:
        first.digest(path)
    first.save()
    data = first.file.read_bytes()
    first.file.write_bytes(data[: len(data) // 2] if cut == "half" else b"[" * 100_000)

    notes: list[str] = []
    cache = ChecksumCache.for_source(tmp_path, enabled=True, log=notes.append)
    assert any("ignoring the corrupt checksum cache" in n for n in notes), notes
    assert [cache.digest(p).crc64nvme for p in files] == [
        crc64nvme_of(p.read_bytes()) for p in files
    ]
    cache.save()
    again = ChecksumCache.for_source(tmp_path, enabled=True, log=notes.append)
    for path in files:
        again.digest(path)
    assert (again.stats.hits, again.stats.misses) == (len(files), 0)


def test_temp_files_of_a_save_killed_midway_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(checksum_cache, "RACY_WINDOW_NS", 0)
    (tmp_path / "shard").write_bytes(b"s" * 1000)
    cache = ChecksumCache.for_source(tmp_path, enabled=True, log=lambda _: None)
    cache.file.parent.mkdir(parents=True)
    left = cache.file.parent / ".tmp-killed.json"
    left.write_text('{"format": "hyperpod-dpd/check')  # cut short by the kill
    old = time.time() - checksum_cache.STALE_TEMP_SECONDS - 1
    os.utime(left, (old, old))
    fresh = cache.file.parent / ".tmp-live.json"  # another run's save, under way
    fresh.write_text("{")
    cache.digest(tmp_path / "shard")
    cache.save()
    assert not left.exists()
    assert fresh.exists()
    assert cache.file.exists()


def test_staging_dirs_of_killed_runs_are_removed_and_live_ones_kept(tmp_path):
    killed = tmp_path / f"{workdir.PREFIX}killed"
    (killed / ".hf-x").mkdir(parents=True)
    (killed / workdir.LOCK).touch()
    (killed / ".hf-x" / "model.safetensors").write_bytes(b"w" * 1000)
    live = tmp_path / f"{workdir.PREFIX}live"
    live.mkdir()
    fd = os.open(live / workdir.LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    other = tmp_path / "not-ours"
    other.mkdir()
    try:
        staged = workdir.Workdir(tmp_path)
        assert not killed.exists()
        assert live.exists() and other.exists()
        assert workdir.remove_stale(tmp_path) == []  # this run's own dir is held
        staged.close()
        assert not staged.path.exists()
    finally:
        os.close(fd)
