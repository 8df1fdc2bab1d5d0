from __future__ import annotations

import pytest

from core.units import format_gib, parse_byte_size


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("8GiB", 2**33),
        ("8 gib", 2**33),
        ("100", 100),
        (4096, 4096),
        ("2TB", 2 * 10**12),
        ("0.5KiB", 512),
        ("10MiB", 10 * 2**20),
    ],
)
def test_parse(text, size):
    assert parse_byte_size(text) == size


@pytest.mark.parametrize("bad", ["", "eight", "8 GiGs", "-1GiB", "0.3B", 0, -5, True])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        parse_byte_size(bad)


def test_format_gib():
    assert format_gib(2**33) == "8 GiB"
    assert format_gib(6144 * 40960) == "0.23 GiB"
