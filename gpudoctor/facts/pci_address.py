"""PCI addresses in one spelling.

nvidia-smi writes ``00000000:2D:00.0`` (8-digit domain, upper case), NVML the
same, lspci ``2d:00.0`` or ``0000:2d:00.0``, sysfs ``0000:2d:00.0``.  Facts
from different sources are joined on the bus id, so every parser normalises to
the sysfs form here.
"""

from __future__ import annotations

import re

# domain is optional (lspci's short form); PCI domains above 0xffff exist (Intel
# VMD puts NVMe/GPUs behind domain 10000), so the domain may be up to 8 digits.
_BUS_ID = re.compile(
    r"^(?:(?P<domain>[0-9a-fA-F]{1,8}):)?"
    r"(?P<bus>[0-9a-fA-F]{1,2}):(?P<device>[0-9a-fA-F]{1,2})\.(?P<function>[0-7])$"
)


def normalize_bus_id(text: object) -> str | None:
    """``"00000000:2D:00.0"`` -> ``"0000:2d:00.0"``; ``None`` when it is no PCI address."""
    if not isinstance(text, str):
        return None
    match = _BUS_ID.match(text.strip())
    if match is None:
        return None
    domain = int(match.group("domain") or "0", 16)
    bus = int(match.group("bus"), 16)
    device = int(match.group("device"), 16)
    if device > 0x1F:  # a PCI device number has 5 bits; anything larger is not an address
        return None
    # sysfs pads the domain to 4 digits but prints wider domains in full
    return f"{domain:04x}:{bus:02x}:{device:02x}.{match.group('function')}"
