"""Byte sizes as users write them ("8GiB", "512MiB", 8589934592) and as we print them."""

from __future__ import annotations

import re

_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")

# The largest value of a Kubernetes `format: int32` field: the API server refuses more
# (kube-openapi validate.IsValueValidAgainstRange), whatever the field's own `maximum` says.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

BYTE_SIZE_FORMS = "a whole number of bytes or a size such as '8GiB', '16 GiB', '512MiB', '10GB'"


def parse_byte_size(value: int | str) -> int:
    """Return the number of bytes `value` stands for.

    Binary units (KiB, MiB, GiB, TiB) are powers of 1024, decimal ones (KB, MB, GB, TB) powers
    of 1000, as in the LMCache and vLLM docs. Raises ValueError naming the accepted forms.
    """
    if isinstance(value, bool):
        raise ValueError(BYTE_SIZE_FORMS)
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("a byte size must be greater than 0")
        return value
    match = _SIZE.match(str(value))
    if not match or match.group(2).upper() not in _UNITS:
        raise ValueError(BYTE_SIZE_FORMS)
    number, unit = match.groups()
    size = float(number) * _UNITS[unit.upper()]
    if size != int(size) or size <= 0:
        raise ValueError(f"'{value}' is not a positive whole number of bytes")
    return int(size)


def format_gib(size: int) -> str:
    """8589934592 -> '8 GiB'; sizes that are not whole GiB keep two decimals."""
    gib = size / 2**30
    return f"{gib:g} GiB" if gib == int(gib) else f"{gib:.2f} GiB"


def format_bytes(size: int, sep: str = " ") -> str:
    """Bytes in the largest binary unit that holds them whole, as parse_byte_size reads them
    back (sep ""): 8589934592 -> '8 GiB', 8587837440 -> '8190 MiB'; a size no KiB divides stays
    in bytes."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size and size % scale == 0:
            return f"{size // scale}{sep}{unit}"
    return f"{size}{sep}B" if sep else str(size)
