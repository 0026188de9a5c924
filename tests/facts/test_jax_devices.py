"""Pasted ``jax.devices()`` listings, from the real captures in ../shared/fixtures/J-tpu."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.facts.jax_devices import parse_jax_devices
from gpudoctor.facts.tpu import chips_seen_by_jax
from tests.helpers.fixtures import fixture_text

V2_8 = "J-tpu/jax-devices-v2-8-tpu-vm-8-TpuDevice-jax0.2.17-jax-8809.txt"
V4_32_WRAPPED = "J-tpu/jax-devices-v4-32-multihost-16-TpuDevice-terminal-wrapped-excerpt-transformers-20252.txt"
IN_USE_LOG = "J-tpu/err-jax-debug-log-unable-to-initialize-backend-tpu-aborted-tpu-in-use-by-pid-jax-22070.txt"


def test_v2_8_eight_cores_on_four_chips_two_cores_each() -> None:
    listing = parse_jax_devices(fixture_text(V2_8))
    assert listing is not None
    devices = listing.tpu_devices
    assert [d.id for d in devices] == list(range(8))
    assert {d.process_index for d in devices} == {0}
    assert [d.core_on_chip for d in devices] == [0, 1] * 4
    assert {d.coords for d in devices} == {(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)}
    assert chips_seen_by_jax(devices) == 4


def test_v4_32_terminal_wrapped_paste_is_joined_back() -> None:
    text = fixture_text(V4_32_WRAPPED)
    assert "TpuDe\nvice" in text and "TpuDevice(i\nd=10" in text  # the wraps this test is about
    listing = parse_jax_devices(text)
    assert listing is not None
    devices = listing.tpu_devices
    assert [d.id for d in devices] == list(range(16))
    assert {d.process_index for d in devices} == {0, 1, 2, 3}
    assert {d.core_on_chip for d in devices} == {0}
    assert all(d.coords is not None and d.coords[2] == d.process_index for d in devices)  # z is the host
    assert chips_seen_by_jax(devices) == 16


def test_cpu_device_list_after_a_tpu_failure() -> None:
    listing = parse_jax_devices(fixture_text(IN_USE_LOG))
    assert listing is not None
    assert listing.tpu_devices == () and listing.cpu_only


def test_synthetic_no_listing_and_gpu_listing() -> None:
    # Synthetic inputs.
    assert parse_jax_devices("nothing here") is None
    listing = parse_jax_devices("[CudaDevice(id=0), CudaDevice(id=1)]")
    assert listing is not None and listing.other_platforms == ("cuda",) and not listing.cpu_only


@given(st.text(max_size=2000))
def test_any_text_parses_without_raising(text: str) -> None:
    parse_jax_devices(text)
    parse_jax_devices("[TpuDevice(" + text)
    parse_jax_devices("[TpuDevice(id=0, coords=(" + text + ")]")
