"""Transfers into the destination: uploads of local files and server-side copies from S3.

Uploads go through boto3's transfer managers: to AWS, the CRT-based one (awscrt: parallel parts
on native threads) when it is installed and the process can have it; to any other endpoint
(S3-compatible stores, local test servers), and as the fallback, the classic s3transfer one
(see Transfers for why). Each object is sent with a CRC64NVME checksum that the client computes
from the bytes it sends and S3 validates on receipt.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import NoCredentialsError
from s3transfer.manager import TransferManager
from s3transfer.subscribers import BaseSubscriber

from checkpoint.errors import UsageError
from checkpoint.manifest import CHECKSUM_ALGORITHM
from checkpoint.s3.client import botocore_session, is_aws_endpoint
from checkpoint.s3.errors import s3_error
from checkpoint.upload.options import TRANSFER_CLIENTS

CRT_LOCK_ENV = "HYPERPOD_DPD_CRT_LOCK"


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
    - On the local endpoint (bench.checkpoint_upload) both take about the same wall time
      (moto's own CPU sets it); classic spends more client CPU there, signing each payload.

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
        serializer = _crt_serializer_class()(botocore_session(), client_kwargs, self._part_size)
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
