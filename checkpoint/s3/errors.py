"""S3 failures as messages a user can act on: which permission is missing, which credentials
were rejected, what to rerun. Anything not understood is passed on as it is (exit 3, a bug to
report), never guessed at.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from checkpoint.errors import CheckpointError, DestinationError, TransferError

PERMISSIONS = (
    "s3:PutObject, s3:GetObject, s3:DeleteObject, s3:ListBucket, s3:GetBucketLocation, "
    "s3:ListBucketMultipartUploads and s3:AbortMultipartUpload"
)
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


def error_code(exc: ClientError) -> str:
    """S3's error code of a failed request: `NoSuchKey`, `AccessDenied`, `404` (a HEAD), ..."""
    return str(exc.response.get("Error", {}).get("Code", ""))


def s3_error(exc: BaseException, action: str, target: str) -> BaseException:
    """A CheckpointError the user can act on, or `exc` itself when it is not understood."""
    if isinstance(exc, CheckpointError):
        return exc
    if isinstance(exc, ClientError):
        code = error_code(exc)
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
