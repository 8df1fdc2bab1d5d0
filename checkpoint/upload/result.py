"""What an upload did: the files transferred and kept, the manifest, for the summary and --json."""

from __future__ import annotations

from dataclasses import dataclass, field

from checkpoint.checksum_cache import CacheStats
from checkpoint.manifest import Manifest
from checkpoint.progress import human_bytes


@dataclass
class UploadResult:
    source: str
    revision: str | None
    dest: str
    manifest_key: str
    manifest_uri: str
    manifest: Manifest | None  # None for a dry run that would change something
    transferred: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    bytes_transferred: int = 0
    extras: list[str] = field(default_factory=list)  # keys under the prefix not in the checkpoint
    extras_deleted: bool = False
    manifest_written: bool = False
    aborted_uploads: int = 0
    transfer_client: str = ""
    peak_tmp_bytes: int = 0
    seconds: float = 0.0
    checksum_cache: CacheStats | None = None  # local sources: files hashed or taken from cache

    def summary(self) -> str:
        verb = "would transfer" if self.manifest is None else "transferred"
        lines = [
            f"{self.source}"
            + (f"@{self.revision}" if self.revision else "")
            + f" -> {self.dest}: {verb} {len(self.transferred)} files "
            f"({human_bytes(self.bytes_transferred)}), kept {len(self.kept)} verified "
            f"in {self.seconds:.1f}s"
        ]
        if self.manifest is not None:
            state = "written" if self.manifest_written else "unchanged"
            lines.append(
                f"manifest {self.manifest_uri} {state}: {len(self.manifest.files)} files, "
                f"{human_bytes(self.manifest.total_bytes)}"
            )
        return "\n".join(lines)
