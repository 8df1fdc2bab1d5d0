"""The destination, s3://bucket/prefix in the cluster's Region, and the transfers into it.

Uploads go through boto3's transfer managers: to AWS, the CRT-based one (awscrt: parallel parts
on native threads) when it is installed and the process can have it; to any other endpoint
(S3-compatible stores, local test servers), and as the fallback, the classic s3transfer one
(see Transfers for why). Every object is written with a CRC64NVME checksum that S3 validates on
receipt and keeps as a full-object checksum (multipart included), plus metadata naming the
source's identity of the content, so that a rerun knows from a HeadObject whether the object is
right.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import boto3
import botocore.auth
import botocore.httpsession
import botocore.session
from awscrt import checksums
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
from s3transfer.manager import TransferManager
from s3transfer.subscribers import BaseSubscriber

from checkpoint.errors import CheckpointError, DestinationError, TransferError, UsageError
from checkpoint.hashing import crc64nvme_b64
from checkpoint.manifest import CHECKSUM_ALGORITHM

META_SOURCE_ID = "hyperpod-dpd-source-id"
META_CRC64NVME = "hyperpod-dpd-crc64nvme"
META_SHA256 = "hyperpod-dpd-sha256"
MIN_PART_SIZE = 5 * 2**20
MAX_PART_SIZE = 5 * 2**30
TRANSFER_CLIENTS = ("auto", "crt", "classic")
PERMISSIONS = (
    "s3:PutObject, s3:GetObject, s3:DeleteObject, s3:ListBucket, s3:GetBucketLocation, "
    "s3:ListBucketMultipartUploads and s3:AbortMultipartUpload"
)
_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")

_DENIED = {"AccessDenied", "AllAccessDisabled", "AccountProblem", "KMS.AccessDeniedException"}
_BAD_CREDENTIALS = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidToken",
    "TokenRefreshRequired",
}
_TRANSIENT = {
    "SlowDown",
    "ServiceUnavailable",
    "InternalError",
    "RequestTimeout",
    "Throttling",
    "ThrottlingException",
    "RequestLimitExceeded",
    "BadDigest",
    "InvalidDigest",
    "XAmzContentChecksumMismatch",
    "XAmzContentSHA256Mismatch",
    "IncompleteBody",
    "OperationAborted",
}


@dataclass(frozen=True)
class S3Location:
    bucket: str
    prefix: str  # no leading or trailing '/'

    def key(self, path: str) -> str:
        return f"{self.prefix}/{path}" if self.prefix else path

    @property
    def list_prefix(self) -> str:
        return f"{self.prefix}/" if self.prefix else ""

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"


def parse_s3_uri(uri: str, flag: str) -> S3Location:
    """s3://bucket/some/prefix -> S3Location; UsageError naming `flag` otherwise."""
    if not uri.startswith("s3://"):
        raise UsageError(f"{flag} {uri!r} must be an S3 URI: s3://BUCKET/PREFIX")
    bucket, _, prefix = uri[len("s3://") :].partition("/")
    if not _BUCKET_NAME.match(bucket) or ".." in bucket:
        raise UsageError(
            f"{flag} {uri!r}: {bucket!r} is not a valid bucket name (3-63 characters: lowercase "
            "letters, digits, '.' and '-')"
        )
    prefix = prefix.strip("/")
    if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
        raise UsageError(f"{flag} {uri!r}: the prefix has an empty, '.' or '..' path segment")
    return S3Location(bucket, prefix)


_SESSIONS: tuple[boto3.session.Session, botocore.session.Session] | None = None
_SESSIONS_LOCK = threading.Lock()
CRT_LOCK_ENV = "HYPERPOD_DPD_CRT_LOCK"


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


# Over plain http (no TLS) SigV4 signs the payload of PutObject/UploadPart: a SHA-256 of the
# body, as the aws-cli does too; the body is also read for its CRC64NVME header. Two things in
# botocore make that costly for the classic client (profiled: 3.7 client CPU-s/GiB, half of it
# this), both replaced here for plain-http clients only:
# - its CRT signer (used whenever awscrt is installed) reads the body for the SHA-256 through
#   a Python callback 4 KiB at a time: 262,144 calls per GiB. _OnePassS3SigV4Auth is botocore's
#   own S3 SigV4 signer (the one it uses without awscrt): same canonical request, headers and
#   signature;
# - it reads the body once for the checksum and once more for the signature: _hash_body_once
#   reads it once, 1 MiB at a time, for both, just before botocore would compute the checksum
#   (and skips it, the header being set); the signer takes the SHA-256 from the request.
# Both are computed from the bytes read right before sending, like botocore's own, never from
# the earlier local hash. Over https the payload is not signed (the CRC64NVME covers the bytes
# and TLS the rest): nothing of this applies and botocore's defaults stay.
ONE_PASS_SIGV4 = "hyperpod-dpd-s3v4-one-pass"
_SIGNED_BODY_OPERATIONS = ("PutObject", "UploadPart")
_PAYLOAD_SHA256 = "hyperpod_dpd_payload_sha256"  # request context key
_BODY_READ = 2**20  # as botocore's own checksum and signature reads


class _OnePassS3SigV4Auth(botocore.auth.S3SigV4Auth):
    def payload(self, request) -> str:
        sha256 = request.context.get(_PAYLOAD_SHA256)
        if sha256 and self._should_sha256_sign_payload(request):
            return sha256
        return super().payload(request)


def _one_pass_signer(signature_version=None, **kwargs) -> str | None:
    return ONE_PASS_SIGV4 if signature_version in ("v4", "s3v4") else None


def _hash_body_once(params, **kwargs) -> None:
    """before-call: the body's CRC64NVME header and payload SHA-256 from one read."""
    context, headers, body = params.get("context", {}), params.get("headers"), params.get("body")
    algorithm = context.get("checksum", {}).get("request_algorithm")
    if (
        not isinstance(algorithm, dict)
        or algorithm.get("in") != "header"
        or algorithm.get("algorithm") != "crc64nvme"
        or headers is None
        or algorithm.get("name") in headers
        or not (hasattr(body, "read") and hasattr(body, "seek") and hasattr(body, "tell"))
    ):
        return  # anything else: botocore as usual
    start = body.tell()
    crc, sha = 0, hashlib.sha256()
    while chunk := body.read(_BODY_READ):
        crc = checksums.crc64nvme(chunk, crc)
        sha.update(chunk)
    body.seek(start)
    headers[algorithm["name"]] = crc64nvme_b64(crc)
    context[_PAYLOAD_SHA256] = sha.hexdigest()


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
    if endpoint_url and urlsplit(endpoint_url).scheme == "http":
        botocore.auth.AUTH_TYPE_MAPS.setdefault(ONE_PASS_SIGV4, _OnePassS3SigV4Auth)
        for operation in _SIGNED_BODY_OPERATIONS:
            client.meta.events.register_first(f"choose-signer.s3.{operation}", _one_pass_signer)
            client.meta.events.register(f"before-call.s3.{operation}", _hash_body_once)
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
        if _code(exc) == "NoSuchBucket":
            raise _no_bucket(bucket, flag) from None
        first = exc
    except BotoCoreError as exc:
        raise s3_error(exc, "find the Region of", f"s3://{bucket}") from None
    # Without s3:GetBucketLocation, HeadBucket still names the Region in a header (even a 403).
    try:
        headers = client.head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPHeaders"]
    except ClientError as exc:
        if _code(exc) in ("404", "NoSuchBucket"):
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


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def s3_error(exc: BaseException, action: str, target: str) -> BaseException:
    """A CheckpointError the user can act on, or `exc` itself when it is not understood."""
    if isinstance(exc, CheckpointError):
        return exc
    if isinstance(exc, ClientError):
        code = _code(exc)
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        message = exc.response.get("Error", {}).get("Message", "")
        if code in _BAD_CREDENTIALS:
            return DestinationError(
                f"AWS rejected the credentials ({code}) when asked to {action} {target}: refresh "
                "them (aws sso login, AWS_PROFILE) or check the staging Job's service-account role"
            )
        if code in _DENIED or (status == 403 and code not in _TRANSIENT):
            return DestinationError(
                f"no permission to {action} {target} ({code or status}: {message}): the AWS "
                f"identity in use needs {PERMISSIONS} on the bucket (and kms:GenerateDataKey and "
                "kms:Decrypt on its key if it uses SSE-KMS); in the cluster that identity is the "
                "staging Job's service-account role"
            )
        if code == "NoSuchBucket":
            return DestinationError(f"no such bucket when asked to {action} {target}: {message}")
        if code in _TRANSIENT or status >= 500:
            return TransferError(
                f"S3 kept failing ({code or status}) to {action} {target} after retries: rerun the "
                "same command to resume; if it says SlowDown, lower --concurrency"
            )
        return TransferError(f"S3 refused to {action} {target}: {code or status}: {message}")
    if isinstance(exc, NoCredentialsError):
        return DestinationError(
            "no AWS credentials found: set AWS_PROFILE or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY "
            "(in the cluster, give the staging Job's service account an IAM role)"
        )
    if isinstance(exc, BotoCoreError | ConnectionError | TimeoutError):
        return TransferError(f"cannot reach S3 to {action} {target}: {exc}")
    try:
        from awscrt.exceptions import AwsCrtError
    except ImportError:  # pragma: no cover - awscrt comes with boto3[crt]
        return exc
    if isinstance(exc, AwsCrtError):
        return TransferError(
            f"the transfer failed to {action} {target} ({exc.name}): {exc.message}"
        )
    return exc


@dataclass(frozen=True)
class ObjectState:
    key: str
    size: int
    crc64nvme: str | None  # S3's full-object CRC64NVME, when the object has one
    metadata: dict[str, str]
    version_id: str | None


class Destination:
    def __init__(self, client, location: S3Location):
        self.client = client
        self.location = location

    def head(self, key: str) -> ObjectState | None:
        try:
            r = self.client.head_object(
                Bucket=self.location.bucket, Key=key, ChecksumMode="ENABLED"
            )
        except ClientError as exc:
            if _code(exc) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise s3_error(exc, "read", f"s3://{self.location.bucket}/{key}") from None
        except BotoCoreError as exc:
            raise s3_error(exc, "read", f"s3://{self.location.bucket}/{key}") from None
        crc = r.get("ChecksumCRC64NVME")
        if crc and "-" in crc:  # a composite (per-part) checksum is not the object's
            crc = None
        return ObjectState(
            key=key,
            size=r["ContentLength"],
            crc64nvme=crc,
            metadata={k.lower(): v for k, v in r.get("Metadata", {}).items()},
            version_id=r.get("VersionId") if r.get("VersionId") not in (None, "null") else None,
        )

    # Pages are followed by hand, not with get_paginator(): loading the paginator model costs
    # ~10 ms of CPU, which is noticeable in a rerun that does little else.
    def list_keys(self) -> dict[str, int]:
        keys: dict[str, int] = {}
        args = {"Bucket": self.location.bucket, "Prefix": self.location.list_prefix}
        try:
            while True:
                page = self.client.list_objects_v2(**args)
                for obj in page.get("Contents", []):
                    keys[obj["Key"]] = obj["Size"]
                if not page.get("IsTruncated"):
                    return keys
                args["ContinuationToken"] = page["NextContinuationToken"]
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, "list", self.location.uri) from None

    def abort_incomplete_uploads(self) -> int:
        """Abort multipart uploads left under the prefix by an interrupted run."""
        aborted = 0
        args = {"Bucket": self.location.bucket, "Prefix": self.location.list_prefix}
        try:
            while True:
                page = self.client.list_multipart_uploads(**args)
                for upload in page.get("Uploads", []):
                    self.client.abort_multipart_upload(
                        Bucket=self.location.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                    )
                    aborted += 1
                if not page.get("IsTruncated"):
                    return aborted
                args["KeyMarker"] = page["NextKeyMarker"]
                args["UploadIdMarker"] = page["NextUploadIdMarker"]
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, "clean up incomplete uploads under", self.location.uri) from None

    def delete_keys(self, keys: list[str]) -> None:
        for start in range(0, len(keys), 1000):
            batch = [{"Key": k} for k in keys[start : start + 1000]]
            try:
                r = self.client.delete_objects(
                    Bucket=self.location.bucket, Delete={"Objects": batch, "Quiet": True}
                )
            except (ClientError, BotoCoreError) as exc:
                raise s3_error(exc, "delete objects under", self.location.uri) from None
            if r.get("Errors"):
                first = r["Errors"][0]
                raise TransferError(
                    f"could not delete s3://{self.location.bucket}/{first['Key']}: "
                    f"{first.get('Code')}: {first.get('Message')}"
                )

    def probe_write(self, key: str) -> None:
        """Fail fast without write permission: start and abort a multipart upload (no object)."""
        target = f"s3://{self.location.bucket}/{key}"
        try:
            upload = self.client.create_multipart_upload(
                Bucket=self.location.bucket, Key=key, ChecksumAlgorithm=CHECKSUM_ALGORITHM
            )
            self.client.abort_multipart_upload(
                Bucket=self.location.bucket, Key=key, UploadId=upload["UploadId"]
            )
        except (ClientError, BotoCoreError) as exc:
            raise s3_error(exc, "write", target) from None


class _Progress(BaseSubscriber):
    def __init__(self, on_bytes: Callable[[int], None]):
        self._on_bytes = on_bytes

    def on_progress(self, future, bytes_transferred, **kwargs):
        self._on_bytes(bytes_transferred)


def _crt_serializer_class():
    from s3transfer.crt import BotocoreCRTRequestSerializer

    class _Serializer(BotocoreCRTRequestSerializer):
        """aws-c-s3 sends the checksum of a single-part PUT as an aws-chunked trailer named in
        `x-amz-trailer`. S3 reads the algorithm from there; S3-compatible stores (moto, ...)
        read `x-amz-sdk-checksum-algorithm`, which the AWS SDKs send along with the trailer.
        Send it too, or such stores keep no checksum for single-part objects."""

        def __init__(self, session, client_kwargs, multipart_threshold: int):
            super().__init__(session, client_kwargs)
            self._threshold = multipart_threshold

        def serialize_http_request(self, transfer_type, future):
            request = super().serialize_http_request(transfer_type, future)
            size = future.meta.call_args.extra_args.get("ContentLength")
            if transfer_type == "put_object" and size is not None and size <= self._threshold:
                request.headers.set("x-amz-sdk-checksum-algorithm", CHECKSUM_ALGORITHM)
            return request

    return _Serializer


class Transfers:
    """Uploads (CRT or classic transfer manager) and server-side copies (classic).

    `auto` picks the CRT client for AWS's own endpoints and the classic one for any other
    --endpoint-url (S3-compatible stores, local test servers):

    - The CRT client sends every upload body aws-chunked, with the CRC64NVME as a trailer and
      `x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER`, even over plain http. S3
      handles that natively; S3-compatible stores decode it in slow paths (moto: in Python, the
      bottleneck of the local benchmark), mishandle it (some keep no checksum; see
      _crt_serializer_class) or reject it; and over http the payload goes unsigned. The classic
      client sends plain bodies, the checksum in a header, the payload signed over http.
    - The CRT client is tuned for S3 itself (a throughput target for the whole host, DNS
      spread over many S3 addresses), which does not carry over to one custom endpoint.
    - Measured on the local endpoint (bench/checkpoint_upload.py), classic is the faster.

    `crt` and `classic` are always honoured (crt falls back to classic, with a note, when it
    cannot be had).
    """

    def __init__(
        self,
        session: boto3.session.Session,
        client,
        *,
        region: str,
        endpoint_url: str | None,
        kind: str,
        concurrency: int,
        part_size: int,
        max_bandwidth: int | None,
        log: Callable[[str], None],
    ):
        if kind not in TRANSFER_CLIENTS:
            raise UsageError(
                f"--transfer-client {kind!r}: use one of {', '.join(TRANSFER_CLIENTS)}"
            )
        self._session = session
        self._client = client
        self._region = region
        self._endpoint_url = endpoint_url
        self._concurrency = concurrency
        self._part_size = part_size
        self._max_bandwidth = max_bandwidth
        self._log = log
        self._classic: TransferManager | None = None
        self._crt = None
        self.kind = "classic"
        if kind == "auto" and not is_aws_endpoint(endpoint_url):
            kind = "classic"
        if kind != "classic":
            reason = self._crt_unavailable()
            if reason is None:
                self._crt = self._make_crt()
                self.kind = "crt"
            elif kind == "crt":
                log(f"note: --transfer-client crt unavailable ({reason}); using the classic client")

    def _crt_unavailable(self) -> str | None:
        if self._max_bandwidth is not None:
            return "--max-bandwidth needs the classic client"
        if self._endpoint_url and urlsplit(self._endpoint_url).scheme not in ("http", "https"):
            return f"endpoint {self._endpoint_url} is neither http nor https"
        try:
            from s3transfer.crt import acquire_crt_s3_process_lock
        except ImportError:
            return "awscrt is not installed"
        # One CRT S3 client per host (it sizes itself to the whole machine); the lock name can
        # be changed for isolated runs such as concurrent test sessions.
        if acquire_crt_s3_process_lock(os.environ.get(CRT_LOCK_ENV, "hyperpod-dpd")) is None:
            return "another process on this host holds the CRT S3 client"
        return None

    def _make_crt(self):
        from s3transfer.crt import (
            BotocoreCRTCredentialsWrapper,
            CRTTransferManager,
            create_s3_crt_client,
        )

        credentials = self._session.get_credentials()
        if credentials is None:
            raise s3_error(NoCredentialsError(), "write", "S3")
        provider = BotocoreCRTCredentialsWrapper(credentials).to_crt_credentials_provider()
        use_ssl = not self._endpoint_url or urlsplit(self._endpoint_url).scheme == "https"
        crt_client = create_s3_crt_client(
            self._region,
            crt_credentials_provider=provider,
            part_size=self._part_size,
            use_ssl=use_ssl,
        )
        client_kwargs: dict = {"region_name": self._region, "endpoint_url": self._endpoint_url}
        if self._endpoint_url:
            client_kwargs["config"] = Config(s3={"addressing_style": "path"})
        serializer = _crt_serializer_class()(_sessions()[1], client_kwargs, self._part_size)
        config = TransferConfig(
            multipart_threshold=self._part_size,
            multipart_chunksize=self._part_size,
            max_concurrency=self._concurrency,
            preferred_transfer_client="crt",
        )
        return CRTTransferManager(crt_client, serializer, config=config)

    def _classic_manager(self) -> TransferManager:
        if self._classic is None:
            config = TransferConfig(
                # s3transfer goes multipart at >= threshold, the CRT client above it: one
                # PutObject, not a one-part multipart upload, for a file of exactly part_size.
                multipart_threshold=self._part_size + 1,
                multipart_chunksize=self._part_size,
                max_concurrency=self._concurrency,
                max_bandwidth=self._max_bandwidth,
                io_chunksize=2**20,
                preferred_transfer_client="classic",
            )
            self._classic = TransferManager(self._client, config)
        return self._classic

    def upload(
        self,
        path: Path,
        bucket: str,
        key: str,
        metadata: dict[str, str],
        on_bytes: Callable[[int], None],
    ) -> None:
        # The checksum is computed by the client from the bytes it sends, never passed in from
        # the local hash: a store that records a claimed checksum without checking it (moto
        # does) would then report our own number back, and the check after the upload (the
        # object's CRC64NVME against the bytes read locally) would prove nothing.
        manager = self._crt or self._classic_manager()
        extra = {"ChecksumAlgorithm": CHECKSUM_ALGORITHM, "Metadata": metadata}
        try:
            manager.upload(
                str(path), bucket, key, extra_args=extra, subscribers=[_Progress(on_bytes)]
            ).result()
        except Exception as exc:
            raise s3_error(exc, "upload to", f"s3://{bucket}/{key}") from None

    def copy(
        self,
        source_client,
        source_bucket: str,
        source_key: str,
        bucket: str,
        key: str,
        metadata: dict[str, str],
        on_bytes: Callable[[int], None],
    ) -> None:
        extra = {
            "ChecksumAlgorithm": CHECKSUM_ALGORITHM,
            "MetadataDirective": "REPLACE",
            "Metadata": metadata,
        }
        try:
            self._classic_manager().copy(
                {"Bucket": source_bucket, "Key": source_key},
                bucket,
                key,
                extra_args=extra,
                subscribers=[_Progress(on_bytes)],
                source_client=source_client,
            ).result()
        except Exception as exc:
            raise s3_error(exc, "copy to", f"s3://{bucket}/{key}") from None

    def close(self) -> None:
        if self._classic is not None:
            self._classic.shutdown()
        if self._crt is not None:
            self._crt.shutdown()
