"""The NGC banner parser over real banners from public issues (tests/captured/ngc, see SOURCES.md), plus
synthetic texts where no citable capture exists (named so)."""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.model import Evidence, EvidenceItem
from gpudoctor.facts.ngc_banner import container_banner, parse_container_banner
from gpudoctor.facts.signature_scan import evidence_texts

CAPTURED = pathlib.Path(__file__).resolve().parents[1] / "captured" / "ngc"


def _read(name: str) -> str:
    return (CAPTURED / name).read_text(encoding="utf-8")


# file -> (product, release, built_for_driver, detected_driver, compat_mode, no_gpu)
EXPECTED = {
    "trtllm-23-error-535.86-vs-510.85.02.txt": (None, None, "535.86", "510.85.02", "unavailable", False),
    "nvidia-docker-1479-tensorrt-20.07.1-error-cuinit-804.txt": (
        None,
        None,
        "450.51",
        "440.33.01",
        "unavailable",
        False,
    ),
    "yolov4-triton-5-tensorrt-20.08-banner-cuinit-803.txt": (
        "NVIDIA TensorRT",
        "20.08",
        "450.51",
        "410.78",
        "unavailable",
        False,
    ),
    "triton-server-139-19.02-quoted-error-410-cuinit-999.txt": (None, "19.02", "410", "396.26", "unavailable", False),
    "llamafactory-5962-butversion-545.23-vs-535.104.05.txt": (None, None, "545.23", "535.104.05", "unavailable", False),
    "spark-vllm-docker-266-590.48-vs-580.159.03.txt": (None, None, "590.48", "580.159.03", "unavailable", False),
    "yolov8-triton-6-525.85-vs-470.199.02.txt": (None, None, "525.85", "470.199.02", "unavailable", False),
    "trtllm-605-pytorch-23.10-banner-excerpt.txt": ("PyTorch", "23.10", None, None, None, False),
    "sagemaker-examples-4655-pytorch-22.10-banner-excerpt.txt": ("PyTorch", "22.10", None, None, None, False),
    "higgs-audio-36-pytorch-25.02-banner-excerpt.txt": ("PyTorch", "25.02", None, None, None, False),
    "megatron-bridge-1553-nemo-25.09-timestamps-excerpt.txt": ("NeMo Framework", None, None, None, None, False),
    "nemo-speech-9268-cuda-init-failed-804.txt": (None, None, None, None, "unavailable", False),
    "mask-auto-labeler-15-pytorch-21.12-timestamps-excerpt.txt": ("PyTorch", "21.12", None, None, None, False),
    "panoptic-seg-20-cuda-11.1.1-driver-not-detected.txt": ("CUDA", None, None, None, None, True),
    "rl-swarm-20-cuda-12.6.3-driver-not-detected-timestamps.txt": ("CUDA", None, None, None, None, True),
}

# SYNTHETIC: the forward-compatibility note in the shape NGC entrypoints print it (the copies found could not be
# tied to a repository, so none is stored as a capture).
SYNTHETIC_FORWARD_COMPAT_BANNER = """=============
== PyTorch ==
=============

NVIDIA Release 23.01 (build 52269074)
PyTorch Version 1.14.0a0+44dac51

NOTE: CUDA Forward Compatibility mode ENABLED.
  Using CUDA 12.0 driver version 525.85.11 with kernel driver version 515.86.01.
  See https://docs.nvidia.com/deploy/cuda-compatibility/ for details.
"""


def test_every_capture_is_listed_in_sources():
    sources = _read("SOURCES.md")
    files = sorted(p.name for p in CAPTURED.glob("*.txt"))
    assert files == sorted(EXPECTED)
    for name in files:
        assert f"`{name}`" in sources


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_captured_banner(name):
    banner = parse_container_banner(_read(name))
    assert banner is not None
    got = (
        banner.product,
        banner.release,
        banner.built_for_driver,
        banner.detected_driver,
        banner.compat_mode,
        banner.no_gpu,
    )
    assert got == EXPECTED[name]


def test_unavailable_banner_quotes_the_verdict_and_cuinit_code():
    banner = parse_container_banner(_read("nvidia-docker-1479-tensorrt-20.07.1-error-cuinit-804.txt"))
    assert banner is not None and banner.quoted is not None
    assert banner.quoted.startswith("ERROR: This container was built for NVIDIA Driver Release 450.51")
    assert "cuInit(0) returned 804" in banner.quoted


def test_synthetic_forward_compat_banner():
    banner = parse_container_banner(SYNTHETIC_FORWARD_COMPAT_BANNER)
    assert banner is not None
    assert (banner.product, banner.release, banner.compat_mode) == ("PyTorch", "23.01", "enabled")
    assert (banner.built_for_driver, banner.detected_driver) == ("525.85.11", "515.86.01")


def test_text_without_a_banner():
    assert parse_container_banner("torch.cuda.is_available() -> False\nNVIDIA-SMI 535.54.03") is None
    assert parse_container_banner("") is None


def _evidence(**items: str) -> Evidence:
    evidence = Evidence(origin={"kind": "file"})
    for name, text in items.items():
        evidence.add(EvidenceItem(name=name, kind="file", text=text))
    return evidence


def test_container_banner_prefers_the_verdict_over_a_bare_header():
    evidence = _evidence(
        **{
            "pasted-text.txt": _read("trtllm-605-pytorch-23.10-banner-excerpt.txt"),
            "tensorflow-log.txt": _read("llamafactory-5962-butversion-545.23-vs-535.104.05.txt"),
        }
    )
    banner = container_banner(evidence_texts(evidence))
    assert banner is not None and banner.compat_mode == "unavailable" and banner.built_for_driver == "545.23"


def test_container_banner_skips_env_json_and_reads_json_strings():
    text = _read("trtllm-23-error-535.86-vs-510.85.02.txt")
    assert container_banner(evidence_texts(_evidence(**{"env.json": json.dumps({"variables": {"X": text}})}))) is None
    banner = container_banner(evidence_texts(_evidence(**{"probe-torch.json": json.dumps({"stderr": text})})))
    assert banner is not None and banner.detected_driver == "510.85.02"


@given(st.text(max_size=400))
def test_parse_never_raises(text):
    parse_container_banner(text)
    parse_container_banner("== PyTorch ==\nNVIDIA Release " + text + " compatibility mode is UNAVAILABLE")


@given(st.text(max_size=200), st.text(max_size=200))
def test_container_banner_never_raises(name, text):
    container_banner(evidence_texts(_evidence(**{name or "x": text})))
