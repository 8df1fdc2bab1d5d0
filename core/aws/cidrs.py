"""CIDR blocks as users write them and what a set of them opens to the internet.

A rule that string-matches `0.0.0.0/0` is bypassed by `0.0.0.0/1` + `128.0.0.0/1`. Instead the
union of every listed block is taken, the address space that is not public (RFC 1918, shared,
loopback, link-local, documentation, multicast, reserved: RFC 6890) is left out, and what remains
is judged by its size.

Each block is also judged alone (`too_wide`): one entry of a list of "your CIDRs" that holds more
public addresses than any one organisation's egress is somebody else's network too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# A /8 or more of public IPv4 addresses (16.7 million), or an IPv6 /32 or wider (an
# ISP's allocation): no organisation's egress is that wide, so it is "the internet".
INTERNET_WIDE_V4 = 2**24
INTERNET_WIDE_V6 = 2**96
# One entry: at most a /16 of public IPv4 (65,536 addresses), the widest network AWS lets you
# build (a VPC's CIDR block is "between a /16 netmask (65,536 IP addresses) and /28", VPC User
# Guide, https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html), and far more
# than the NAT gateways' and offices' addresses a list of allowed clients names; wider public
# blocks are ISPs' and cloud providers' ranges, shared with their other customers. IPv6: at most
# a /48, what an end site is assigned (RFC 6177, "IPv6 Address Assignment to End Sites").
ENTRY_MAX_V4 = 2**16
ENTRY_MAX_V6 = 2**80

_NOT_PUBLIC_V4 = [
    ipaddress.IPv4Network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
        "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    )
]  # fmt: skip
_NOT_PUBLIC_V6 = [ipaddress.IPv6Network(n) for n in ("fc00::/7", "fe80::/10", "ff00::/8", "::/127")]


def parse_cidr(text: str) -> Network:
    """A CIDR block written canonically: its network address (no host bits set), a prefix
    length within the family's, no leading zeros. ValueError says what is wrong."""
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    if str(network) != text:
        raise ValueError(f"{text!r} is not written canonically; did you mean {str(network)!r}?")
    return network


def public_addresses(cidrs: Iterable[str]) -> tuple[int, int]:
    """(public IPv4, public IPv6) addresses in the union of `cidrs` (unparseable ones skipped:
    the config checks report them)."""
    v4, v6 = [], []
    for text in cidrs:
        try:
            network = ipaddress.ip_network(str(text), strict=False)
        except ValueError:
            continue
        (v4 if network.version == 4 else v6).append(network)
    return _public(v4, _NOT_PUBLIC_V4), _public(v6, _NOT_PUBLIC_V6)


def _public(networks: list, reserved: list) -> int:
    total = 0
    for network in ipaddress.collapse_addresses(networks):  # disjoint, so no double counting
        total += network.num_addresses
        for block in reserved:  # disjoint blocks: subtract each overlap once
            if block.subnet_of(network):
                total -= block.num_addresses
            elif network.subnet_of(block):
                total -= network.num_addresses
    return total


def internet_wide(cidrs: Iterable[str]) -> bool:
    v4, v6 = public_addresses(cidrs)
    return v4 >= INTERNET_WIDE_V4 or v6 >= INTERNET_WIDE_V6


def too_wide(cidr: str) -> bool:
    """Whether one block holds more public addresses than one organisation's clients take
    (ENTRY_MAX_V4, ENTRY_MAX_V6); unparseable: False (the config checks report it)."""
    v4, v6 = public_addresses([cidr])
    return v4 > ENTRY_MAX_V4 or v6 > ENTRY_MAX_V6
