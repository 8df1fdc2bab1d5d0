"""Fixtures of the staging tests: a local S3 (moto) and a local Hugging Face Hub, both on
127.0.0.1 with free ports, started once for this package; dummy AWS credentials; no other network."""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Callable
from pathlib import Path

import boto3
import pytest

from checkpoint.checksum_cache import CACHE_ENV
from hyperpod_dpd import cli
from hyperpod_dpd.cli import checkpoint as checkpoint_cmd
from tests.checkpoint.fakehub import FakeHub, HubFile, HubRepo
from tests.checkpoint.s3server import RecordingMotoServer

REGION = "us-east-2"
COMMIT = "3f1c2a9b7d4e5f60718293a4b5c6d7e8f9012345"
OLD_COMMIT = "0123456789abcdef0123456789abcdef01234567"
MiB = 2**20
_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",  # never ask 169.254.169.254
    "AWS_CONFIG_FILE": "/dev/null",
    "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
}
_UNSET = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_REGION",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HF_ENDPOINT",
    "HF_HUB_OFFLINE",
)


@pytest.fixture(scope="package", autouse=True)
def aws_env():
    with pytest.MonkeyPatch.context() as mp:
        for name in _UNSET:
            mp.delenv(name, raising=False)
        for name, value in _ENV.items():
            mp.setenv(name, value)
        # This session's own CRT lock: another test run on the host must not push it to classic.
        mp.setenv("HYPERPOD_DPD_CRT_LOCK", f"hyperpod-dpd-tests-{os.getpid()}")
        yield


@pytest.fixture(autouse=True)
def quick_file_retries(monkeypatch):
    """A file's retries after 10 ms, not 0.25 s and more: the same attempts, less waiting."""
    monkeypatch.setattr("checkpoint.upload.executor.RETRY_DELAY_SECONDS", 0.01)


@pytest.fixture(autouse=True)
def checksum_cache_dir(tmp_path, monkeypatch) -> Path:
    """Each test its own checksum cache (never the user's ~/.cache)."""
    directory = tmp_path / "checksum-cache"
    monkeypatch.setenv(CACHE_ENV, str(directory))
    return directory


@pytest.fixture(scope="package")
def s3(aws_env):
    with RecordingMotoServer() as server:
        yield server


@pytest.fixture(scope="package")
def s3_client(s3):
    return boto3.client("s3", endpoint_url=s3.endpoint, region_name=REGION)


_names = itertools.count()


@pytest.fixture
def bucket(s3, s3_client) -> str:
    """A new versioned bucket in us-east-2 (the stack's model bucket is versioned too)."""
    name = f"ckpt-{next(_names)}"
    s3_client.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": REGION})
    s3_client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


def write_checkpoint(root: Path, sizes: dict[str, int], seed: int = 7) -> dict[str, bytes]:
    """Checkpoint-shaped files of the given sizes with reproducible random bytes."""
    rng = random.Random(seed)
    contents = {}
    for rel, size in sizes.items():
        data = rng.randbytes(size)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        contents[rel] = data
    return contents


SMALL_CHECKPOINT = {
    "config.json": 700,
    "tokenizer.json": 40_000,
    "model-00001-of-00002.safetensors": 6 * MiB + 123,  # multipart at --part-size 5MiB
    "model-00002-of-00002.safetensors": 1 * MiB,
    "model.safetensors.index.json": 2_000,
}


@pytest.fixture
def local_checkpoint(tmp_path) -> tuple[Path, dict[str, bytes]]:
    root = tmp_path / "ckpt"
    return root, write_checkpoint(root, SMALL_CHECKPOINT)


@pytest.fixture
def run_cli(s3, capsys, monkeypatch) -> Callable[..., tuple[int, str, str]]:
    """`hyperpod-dpd checkpoint ...` in-process, through the registered command."""
    assert checkpoint_cmd in cli.COMMANDS

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = cli.main(["checkpoint", *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def hub_model() -> dict[str, HubFile]:
    rng = random.Random(11)
    return {
        "config.json": HubFile(
            b'{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2}', False
        ),
        "tokenizer.json": HubFile(rng.randbytes(30_000), False),
        "model-00001-of-00002.safetensors": HubFile(rng.randbytes(6 * MiB + 5), True),
        "model-00002-of-00002.safetensors": HubFile(rng.randbytes(MiB), True),
        "model.safetensors.index.json": HubFile(b'{"weight_map": {}}', False),
        "original/consolidated.00.pth": HubFile(rng.randbytes(2 * MiB), True),
    }


@pytest.fixture(scope="package")
def hub(aws_env):
    server = FakeHub().start()
    model = hub_model()
    older = {**model, "config.json": HubFile(b'{"num_hidden_layers": 1}', False)}
    server.repos["acme/tiny-llm"] = HubRepo(commits={COMMIT: model, OLD_COMMIT: older}, main=COMMIT)
    server.repos["acme/gated-llm"] = HubRepo(
        commits={COMMIT: dict(list(model.items())[:3])},
        main=COMMIT,
        gated=True,
        granted_tokens={"hf_granted"},
    )
    server.valid_tokens |= {"hf_granted", "hf_not_granted"}
    yield server
    server.stop()


@pytest.fixture
def hub_env(hub, monkeypatch, tmp_path):
    """Point huggingface_hub at the fake Hub; HF_HOME in tmp so no stored token is used."""
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    hub.corrupt.clear()
    return hub


def upload_args(src, dest: str, s3, *extra: str) -> list[str]:
    """`checkpoint upload` of `src` to `dest` on the local S3 (the tests' common flags first)."""
    return [
        "upload", "--source", str(src), "--dest", dest, "--endpoint-url", s3.endpoint,
        "--region", REGION, *extra,
    ]  # fmt: skip
