"""The pieces without a server: checksums, manifest format, progress line, Job command."""

from __future__ import annotations

import io
import json

import pytest

from checkpoint.errors import ManifestError
from checkpoint.hashing import digest_file
from checkpoint.job import job_command, staging_prefix
from checkpoint.manifest import Manifest, ManifestFile, manifest_key
from checkpoint.program import build_parser
from checkpoint.progress import Progress, human_bytes, human_duration

SHA = "a" * 40


def test_checksums_match_the_reference_check_values(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"123456789")
    d = digest_file(path, sha256=True, git_sha1=True)
    # CRC-64/NVME check value of "123456789" is 0xAE8B14860A799888.
    assert d.crc64nvme == "rosUhgp5mIg="
    assert d.sha256 == "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"
    hello = tmp_path / "hello"
    hello.write_bytes(b"hello\n")
    # `git hash-object` of "hello\n".
    assert digest_file(hello, git_sha1=True).git_sha1 == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_manifest_round_trips_and_compares_by_content():
    files = (
        ManifestFile("b.safetensors", 10, "rosUhgp5mIg=", "sha256:" + "0" * 64, "0" * 64, "v1"),
        ManifestFile("a/config.json", 2, "AAAAAAAAAAA=", "git-sha1:" + "1" * 40),
    )
    m = Manifest(source="hf://acme/m", revision=SHA, files=files, exclude=("original/*",))
    doc = json.loads(m.to_json())
    assert [f["path"] for f in doc["files"]] == ["a/config.json", "b.safetensors"]
    assert doc["totalBytes"] == 12 and doc["fileCount"] == 2
    back = Manifest.from_json(m.to_json(), "s3://b/k")
    assert back == m
    later = Manifest(source=m.source, revision=SHA, files=files[::-1], exclude=m.exclude)
    assert m.same_checkpoint(later)  # the creation time and order do not matter
    other = Manifest(source=m.source, revision="b" * 40, files=files, exclude=m.exclude)
    assert not m.same_checkpoint(other)
    assert manifest_key("models/x/") == "models/x/.hyperpod-dpd-manifest.json"
    assert manifest_key("") == ".hyperpod-dpd-manifest.json"


def _doc(**changes) -> bytes:
    entry = {"path": "a", "size": 1, "crc64nvme": "AAAAAAAAAAA=", "sourceId": "x", "sha256": None}
    doc = {
        "format": "hyperpod-dpd/checkpoint-manifest/v1",
        "source": "s",
        "revision": None,
        "created": "2026-01-01T00:00:00Z",
        "files": [entry],
    }
    for key, value in changes.items():
        if key.startswith("file_"):
            entry[key[5:]] = value
        else:
            doc[key] = value
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", "is not valid JSON"),
        (_doc(format="other/v9"), "is not a hyperpod-dpd manifest (format 'other/v9'"),
        (_doc(file_crc64nvme="abc"), "bad crc64nvme 'abc' for a"),
        (_doc(file_path="../etc/passwd"), "bad path '../etc/passwd'"),
        (_doc(file_size=-1), "bad size -1 for a"),
        (_doc(file_sha256="XYZ"), "bad sha256 'XYZ' for a"),
        (_doc(files=[json.loads(_doc())["files"][0]] * 2), "lists a file twice"),
    ],
)
def test_a_bad_manifest_is_refused_with_the_reason(data, message):
    with pytest.raises(ManifestError, match="s3://b/m") as info:
        Manifest.from_json(data, "s3://b/m")
    assert message in str(info.value)
    assert "rerun `hyperpod-dpd checkpoint upload`" in str(info.value)


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_line_shows_bytes_rate_and_eta():
    clock = _Clock()
    p = Progress({"upload": 4 * 2**20}, files=2, stream=io.StringIO(), mode="plain", clock=clock)
    for _ in range(4):
        clock.now += 0.5
        p.add("upload", 2**19)
    p.file_done()
    line = p.render()
    assert "upload 2.0 MiB/4.0 MiB 1.0 MiB/s" in line
    assert "ETA 0:02" in line and "files 1/2" in line and " 50.0%" in line


def test_progress_eta_waits_for_every_phase():
    clock = _Clock()
    p = Progress(
        {"download": 100, "upload": 100}, files=1, stream=io.StringIO(), mode="plain", clock=clock
    )
    clock.now += 2
    p.add("download", 100)
    assert "ETA --:--" in p.render()  # nothing uploaded yet: no honest estimate
    clock.now += 2
    p.add("upload", 50)
    assert "ETA 0:04" in p.render()  # 50 bytes left at 12.5 B/s (50 bytes in 4 s)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_redraws_in_place_on_a_terminal_and_prints_lines_otherwise():
    tty, plain = _Tty(), io.StringIO()
    for stream in (tty, plain):
        with Progress({"upload": 10}, files=1, stream=stream, interval=0.01) as p:
            p.add("upload", 10)
            p.file_done()
    assert tty.getvalue().startswith("\r") and tty.getvalue().endswith("\n")
    assert "\r" not in plain.getvalue()
    assert plain.getvalue().splitlines()[-1].startswith("[####################] 100.0%")
    silent = io.StringIO()
    with Progress({"upload": 10}, files=1, stream=silent, mode="none") as p:
        p.add("upload", 10)
    assert silent.getvalue() == ""


def test_human_units():
    assert human_bytes(512) == "512 B"
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(3 * 2**40) == "3.0 TiB"
    assert human_duration(3725) == "1:02:05"
    assert human_duration(None) == "--:--"


def test_the_job_command_parses_with_the_cli_and_stages_one_prefix_per_commit():
    prefix = staging_prefix("meta-llama/Llama-3.3-70B-Instruct", SHA)
    assert prefix == f"models/meta-llama/Llama-3.3-70B-Instruct/{SHA}"
    with pytest.raises(ValueError, match="40-hex commit SHA"):
        staging_prefix("a/b", "main")
    cmd = job_command(
        source="hf://meta-llama/Llama-3.3-70B-Instruct",
        dest=f"s3://models-bucket/{prefix}",
        revision=SHA,
        region="us-east-2",
        tmp_limit="200GiB",
        exclude=("original/*",),
    )
    assert cmd[:4] == ["python", "-m", "checkpoint", "upload"]
    args = build_parser().parse_args(cmd[3:])
    assert (args.source, args.revision, args.region) == (
        "hf://meta-llama/Llama-3.3-70B-Instruct",
        SHA,
        "us-east-2",
    )
    assert args.tmp_limit == 200 * 2**30 and args.exclude == ["original/*"]
    assert args.progress == "plain"
