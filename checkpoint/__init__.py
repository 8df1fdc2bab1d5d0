"""Model checkpoint staging in S3: resumable, verified, idempotent, with a manifest written last.

  from checkpoint import upload_checkpoint, verify_checkpoint, UploadOptions
  upload_checkpoint("hf://meta-llama/Llama-3.3-70B-Instruct", "s3://bucket/models/llama/<sha>",
                    revision="<sha>", options=UploadOptions(region="us-east-2"))

The manifest object `<prefix>/.hyperpod-dpd-manifest.json` (MANIFEST_NAME) is the only sign of
a complete checkpoint; see manifest.py for its format and job.py for the Job's command line.
"""

from importlib import import_module
from typing import Any

# Where each public name lives. Loaded on first use (PEP 562), so that `--help` of the command
# line, which imports this package, does not load boto3 and the Hub client.
_EXPORTS = {
    "CheckpointError": "checkpoint.errors",
    "JOB_ENV": "checkpoint.job",
    "job_command": "checkpoint.job",
    "staging_prefix": "checkpoint.job",
    "MANIFEST_NAME": "checkpoint.manifest",
    "Manifest": "checkpoint.manifest",
    "manifest_key": "checkpoint.manifest",
    "read_manifest": "checkpoint.manifest",
    "upload_checkpoint": "checkpoint.upload.run",
    "UploadOptions": "checkpoint.upload.options",
    "UploadResult": "checkpoint.upload.result",
    "VerifyReport": "checkpoint.verify",
    "verify_checkpoint": "checkpoint.verify",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'checkpoint' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)


__all__ = [
    "JOB_ENV",
    "MANIFEST_NAME",
    "CheckpointError",
    "Manifest",
    "UploadOptions",
    "UploadResult",
    "VerifyReport",
    "job_command",
    "manifest_key",
    "read_manifest",
    "staging_prefix",
    "upload_checkpoint",
    "verify_checkpoint",
]
