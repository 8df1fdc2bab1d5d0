"""The images a stack runs, each with the config key that sets it: what the plan lists (pinned by
digest or by tag alone) and what `hyperpod-dpd fetch --stack` resolves."""

from __future__ import annotations

from dataclasses import dataclass

from core.images import is_pinned
from core.vocabulary import PROJECT
from settings import StackSettings


@dataclass(frozen=True)
class StackImage:
    key: str  # the config key that sets it (or the command flag)
    image: str

    @property
    def pinned(self) -> bool:
        return is_pinned(self.image)


def stack_images(settings: StackSettings) -> list[StackImage]:
    """Each endpoint's worker image and the Jobs' (checkpoint staging, benchmark runs)."""
    images = [StackImage(e.config_key("image"), e.config.image) for e in settings.entries()]
    images.append(StackImage(f"{PROJECT}:jobs.image", settings.jobs.image))
    return images


def images_json(settings: StackSettings) -> list[dict[str, str | bool]]:
    """plan.json's images: each with its key and whether it is pinned by digest."""
    return [{"key": i.key, "image": i.image, "pinned": i.pinned} for i in stack_images(settings)]
