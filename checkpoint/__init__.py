"""Model checkpoint staging in S3: resumable, verified, idempotent, with a manifest written last.

  from checkpoint import upload_checkpoint, verify_checkpoint, UploadOptions
  upload_checkpoint("hf://meta-llama/Llama-3.3-70B-Instruct", "s3://bucket/models/llama/<sha>",
                    revision="<sha>", options=UploadOptions(region="us-east-2"))

The manifest object `<prefix>/.hyperpod-dpd-manifest.json` (MANIFEST_NAME) is the only sign of
a complete checkpoint; see manifest.py for its format and job.py for the Job's command line.
"""

from checkpoint.errors import CheckpointError
from checkpoint.job import JOB_ENV, job_command, staging_prefix
from checkpoint.manifest import MANIFEST_NAME, Manifest, manifest_key, read_manifest
from checkpoint.upload import UploadOptions, UploadResult, upload_checkpoint
from checkpoint.verify import VerifyReport, verify_checkpoint

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
