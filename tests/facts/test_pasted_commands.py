"""Container commands and platforms in a paste."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.paste_text import PasteError
from gpudoctor.evidence.snapshot import paste_evidence
from gpudoctor.facts.pasted_commands import pasted_containers, pasted_platform


def _evidence(text: str):  # type: ignore[no-untyped-def]
    return paste_evidence(text.encode(), "paste")


def test_gpu_flags_of_each_engine_are_recognised() -> None:
    # Synthetic command lines in the documented forms of each engine.
    text = "\n".join(
        [
            "$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi",
            "$ podman run --device nvidia.com/gpu=all ubuntu nvidia-smi",
            "$ sudo docker run --runtime=nvidia -it nvcr.io/nvidia/pytorch:24.05-py3",
            "$ nvidia-docker run --rm nvidia/cuda:9.0-base nvidia-smi",
            "$ docker run -it anibali/pytorch:1.4.0-cuda10.1 sh",
        ]
    )
    runs = pasted_containers(_evidence(text)).runs
    assert [run.gpu_access for run in runs] == [True, True, True, True, False]
    assert pasted_containers(_evidence(text)).image_cuda == ("12.4", "9.0")


def test_the_platform_a_paste_shows() -> None:
    assert pasted_platform(_evidence("OS: Microsoft Windows 10 Pro\n")) == "windows"
    assert pasted_platform(_evidence("Linux host 5.15.133.1-microsoft-standard-WSL2 x86_64\n")) == "wsl"
    assert pasted_platform(_evidence("hello\n")) is None


@given(st.text(max_size=800))
def test_any_paste_parses_without_raising(text: str) -> None:
    if not text.strip():
        return
    try:
        evidence = _evidence(text)
    except PasteError:
        return  # refused as binary: one clear line, tested in tests/evidence
    assert isinstance(pasted_containers(evidence).runs, tuple)
    pasted_platform(evidence)
