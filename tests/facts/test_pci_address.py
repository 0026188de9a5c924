"""normalize_bus_id: every source's PCI address spelled the sysfs way."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.pci_address import normalize_bus_id


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("00000000:2D:00.0", "0000:2d:00.0"),  # nvidia-smi / NVML
        ("0000:04:00.0", "0000:04:00.0"),  # nvidia-smi v8 XML, sysfs
        ("2d:00.0", "0000:2d:00.0"),  # lspci short form
        ("  00000000:C1:00.1 ", "0000:c1:00.1"),
        ("00010000:01:00.0", "10000:01:00.0"),  # VMD domains are wider than 4 digits
        ("0:1:2.3", "0000:01:02.3"),
    ],
)
def test_normalises(raw: str, expected: str) -> None:
    assert normalize_bus_id(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "N/A",
        "GPU-28604e81-21ec-cc48-6759-bf2648b22e16",
        "0000:2d:00.8",
        "0000:2d:20.0",
        "0000:2d:00",
        "000000000:2d:00.0",
        42,
    ],
)
def test_rejects_what_is_no_address(raw: object) -> None:
    assert normalize_bus_id(raw) is None  # type: ignore[arg-type]


@given(st.text())
def test_never_raises_and_is_idempotent(text: str) -> None:
    once = normalize_bus_id(text)
    assert once is None or normalize_bus_id(once) == once


@given(st.integers(0, 0xFFFFFFFF), st.integers(0, 0xFF), st.integers(0, 0x1F), st.integers(0, 7), st.booleans())
def test_nvidia_smi_spelling_round_trips(domain: int, bus: int, device: int, function: int, upper: bool) -> None:
    raw = f"{domain:08x}:{bus:02x}:{device:02x}.{function}"
    normalised = normalize_bus_id(raw.upper() if upper else raw)
    assert normalised is not None
    parts = normalised.replace(".", ":").split(":")
    assert [int(part, 16) for part in parts] == [domain, bus, device, function]
    assert normalised == normalised.lower() and len(parts[0]) >= 4
