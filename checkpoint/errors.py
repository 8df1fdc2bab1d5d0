"""Failures a user can act on. Each message says what went wrong, which flag or value is at
fault, what is allowed and how to fix it; the command line prints it without a traceback.

Exit codes (`hyperpod-dpd checkpoint ...` and `python -m checkpoint ...`):
  0  done (upload: every object verified and the manifest written; verify: all objects match)
  1  the transfer or the check failed (integrity, throttling or network after retries, disk
     full, objects not matching the manifest): rerun the same command to resume
  2  bad input: a flag, the source, the destination bucket, its Region or permissions
  3  internal error (a bug: rerun with --debug for the traceback)
(The codes are core/exits.py's, as for every command.)
"""

from __future__ import annotations

from core.exits import EXIT_BAD_INPUT, EXIT_FAILED


class CheckpointError(Exception):
    """A failure with a message meant for the user."""

    exit_code = EXIT_FAILED


class UsageError(CheckpointError):
    """A flag or value is wrong."""

    exit_code = EXIT_BAD_INPUT


class SourceError(CheckpointError):
    """The source cannot be read: unknown model, gated without token, missing revision, ..."""

    exit_code = EXIT_BAD_INPUT


class DestinationError(CheckpointError):
    """The destination cannot be used: missing bucket, other Region, no permission."""

    exit_code = EXIT_BAD_INPUT


class TransferError(CheckpointError):
    """A transfer failed after its retries (throttling, 5xx, network)."""


class IntegrityError(CheckpointError):
    """Bytes do not match a published or recorded checksum, after re-fetching."""


class DiskFullError(CheckpointError):
    """Not enough local disk to stage a file from the source."""


class ManifestError(CheckpointError):
    """The manifest object is missing fields or is not a hyperpod-dpd manifest."""


class VerifyFailed(CheckpointError):
    """Objects under the prefix do not match the manifest."""
