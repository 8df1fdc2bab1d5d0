"""One read of each upload body for both its CRC64NVME header and its SigV4 payload hash.

Over plain http (no TLS) SigV4 signs the payload of PutObject/UploadPart: a SHA-256 of the
body, as the aws-cli does too; the body is also read for its CRC64NVME header. Two things in
botocore make that costly for the classic client (profiled: 3.7 client CPU-s/GiB, half of it
this), both replaced here for plain-http clients only:
- its CRT signer (used whenever awscrt is installed) reads the body for the SHA-256 through
  a Python callback 4 KiB at a time: 262,144 calls per GiB. _OnePassS3SigV4Auth is botocore's
  own S3 SigV4 signer (the one it uses without awscrt): same canonical request, headers and
  signature;
- it reads the body once for the checksum and once more for the signature: _hash_body_once
  reads it once, 1 MiB at a time, for both, just before botocore would compute the checksum
  (and skips it, the header being set); the signer takes the SHA-256 from the request.
Both are computed from the bytes read right before sending, like botocore's own, never from
the earlier local hash. Over https the payload is not signed (the CRC64NVME covers the bytes
and TLS the rest): nothing of this applies and botocore's defaults stay.
"""

from __future__ import annotations

import hashlib

import botocore.auth
from awscrt import checksums

from checkpoint.hashing import crc64nvme_b64

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


def sign_in_one_pass(client) -> None:
    """Make `client` (plain http) sign PutObject/UploadPart payloads with the hash of the one
    read that also gives their CRC64NVME. The signer's name is registered with botocore for the
    whole process (its registry is global); only clients passed here choose it."""
    botocore.auth.AUTH_TYPE_MAPS.setdefault(ONE_PASS_SIGV4, _OnePassS3SigV4Auth)
    for operation in _SIGNED_BODY_OPERATIONS:
        client.meta.events.register_first(f"choose-signer.s3.{operation}", _one_pass_signer)
        client.meta.events.register(f"before-call.s3.{operation}", _hash_body_once)
