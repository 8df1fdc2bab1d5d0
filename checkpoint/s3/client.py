"""S3 clients: one boto3 session for the process, clients configured for long transfers, and the
Region a bucket is in (a client must be made for that Region).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import boto3
import botocore.httpsession
import botocore.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from checkpoint.errors import DestinationError
from checkpoint.s3.errors import error_code, s3_error

_SESSIONS: tuple[boto3.session.Session, botocore.session.Session] | None = None
_SESSIONS_LOCK = threading.Lock()


def _sessions() -> tuple[boto3.session.Session, botocore.session.Session]:
    """The process's boto3 session and the botocore session it wraps, made once: the loader
    then parses the S3 service model once for all clients (boto3 cannot wrap a botocore
    session twice)."""
    global _SESSIONS
    with _SESSIONS_LOCK:
        if _SESSIONS is None:
            core = botocore.session.get_session()
            _SESSIONS = (boto3.session.Session(botocore_session=core), core)
        return _SESSIONS


def default_session() -> boto3.session.Session:
    """The boto3 session to use (credentials and Region from the environment as usual)."""
    return _sessions()[0]


def botocore_session() -> botocore.session.Session:
    """The botocore session under default_session() (the CRT transfer manager's serializer)."""
    return _sessions()[1]


def client_config(region: str, endpoint_url: str | None, concurrency: int) -> Config:
    """Standard retries (exponential backoff with jitter on throttling, 5xx and connection
    errors, up to 10 attempts per request), a connection pool sized to the concurrency.

    Not "adaptive": its client-side rate limiter is shared by all threads of a client and,
    after a few SlowDown answers, holds back the whole transfer far longer than needed."""
    return Config(
        region_name=region,
        retries={"mode": "standard", "max_attempts": 10},
        max_pool_connections=concurrency + 16,
        connect_timeout=10,
        read_timeout=120,
        tcp_keepalive=True,
        user_agent_extra="hyperpod-dpd-checkpoint",
        # Custom endpoints (S3-compatible stores, local test servers) rarely do virtual hosts.
        s3={"addressing_style": "path"} if endpoint_url else None,
    )


# urllib3 sends a file body in blocks of botocore.httpsession.BUFFER_SIZE (128 KiB): one Python
# read() through s3transfer's file wrappers and progress callbacks, and one sendall(), per block.
# 1 MiB blocks take measurably less client CPU (about 0.1 s per GiB uploaded here). botocore
# reads the constant only when it builds a client's connection pools, hence the swap around the
# creation of ours (under a lock, as clients may be made on several threads).
SEND_BLOCK = 2**20
_SEND_BLOCK_LOCK = threading.Lock()


@contextlib.contextmanager
def _send_block_size(size: int) -> Iterator[None]:
    with _SEND_BLOCK_LOCK:
        current = getattr(botocore.httpsession, "BUFFER_SIZE", None)
        if not current or current >= size:  # urllib3 1.x (no blocksize), or already large
            yield
            return
        botocore.httpsession.BUFFER_SIZE = size
        try:
            yield
        finally:
            botocore.httpsession.BUFFER_SIZE = current


def make_client(
    session: boto3.session.Session, region: str, endpoint_url: str | None, concurrency: int
):
    with _send_block_size(SEND_BLOCK):
        client = session.client(
            "s3", endpoint_url=endpoint_url, config=client_config(region, endpoint_url, concurrency)
        )
    return client


def is_aws_endpoint(endpoint_url: str | None) -> bool:
    """No --endpoint-url, or one of AWS's own S3 endpoints (FIPS, dual-stack, VPC interface
    endpoints: all under amazonaws.com / amazonaws.com.cn / api.aws)."""
    if not endpoint_url:
        return True
    host = (urlsplit(endpoint_url).hostname or "").lower().rstrip(".")
    return host.endswith((".amazonaws.com", ".amazonaws.com.cn", ".api.aws"))


def _normalize_location(constraint: str | None) -> str:
    return {None: "us-east-1", "": "us-east-1", "EU": "eu-west-1"}.get(constraint, constraint)


def bucket_region(client, bucket: str, flag: str) -> str:
    """The Region the bucket lives in (DestinationError when it does not exist)."""
    try:
        return _normalize_location(
            client.get_bucket_location(Bucket=bucket).get("LocationConstraint")
        )
    except ClientError as exc:
        if error_code(exc) == "NoSuchBucket":
            raise _no_bucket(bucket, flag) from None
        first = exc
    except BotoCoreError as exc:
        raise s3_error(exc, "find the Region of", f"s3://{bucket}") from None
    # Without s3:GetBucketLocation, HeadBucket still names the Region in a header (even a 403).
    try:
        headers = client.head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPHeaders"]
    except ClientError as exc:
        if error_code(exc) in ("404", "NoSuchBucket"):
            raise _no_bucket(bucket, flag) from None
        headers = exc.response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    region = headers.get("x-amz-bucket-region")
    if region:
        return region
    raise s3_error(first, "find the Region of", f"s3://{bucket}")


def _no_bucket(bucket: str, flag: str) -> DestinationError:
    return DestinationError(
        f"bucket {bucket} ({flag}) does not exist: fix the bucket name, or create it in the "
        "cluster's Region (the stack's model bucket)"
    )


def probe_region(session: boto3.session.Session, region: str | None) -> str:
    """The Region to point a client at before the bucket's own is known."""
    return region or session.region_name or "us-east-1"


def bucket_client(
    session: boto3.session.Session,
    bucket: str,
    flag: str,
    *,
    region: str | None,
    endpoint_url: str | None,
    concurrency: int,
):
    """A client in the bucket's Region, found with a small client pointed at `region` first."""
    probe = make_client(session, probe_region(session, region), endpoint_url, 4)
    return make_client(session, bucket_region(probe, bucket, flag), endpoint_url, concurrency)
