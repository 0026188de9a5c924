"""Several tools' outputs pasted into one text are cut back into the outputs they were.

The parts are real captured outputs (../shared/fixtures, read in place); only their concatenation, with the
prompts and prose around them, is synthetic, as an issue template makes people write it.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.evidence.paste_sections import split_paste
from gpudoctor.evidence.paste_text import normalise_paste
from tests.helpers.fixtures import fixture_text

COLLECT_ENV = "E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt"
SMI_TABLE = "C/gls-8x-h100-sxm-565.57.01.txt"
TOPO = "B/stas00-mleng-2gpu-nv2.txt"
NVCC = "D/nvcc-12.8.93-cosmos-rl-131.txt"
PROC_VERSION = "D/proc-version-open-kernel-module-565.57.01-ubuntu2404-nixgl-186.txt"
LSPCI = "D/lspci-lnkcap-lnksta-rtx4090-riser-downgraded-2.5GTs-jan-183.txt"


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def _template(parts: dict[str, str]) -> str:
    # Synthetic glue: what a bug-report template makes people type between the outputs.
    return (
        "### Describe the bug\nTraining fails on the new box, see below.\n\n### Environment\n```\n"
        f"$ python -m torch.utils.collect_env\n{parts['collect_env']}\n```\n\n"
        f"```\n$ nvidia-smi\n{parts['smi']}\n```\n"
        f"and the topology:\n```\n$ nvidia-smi topo -m\n{parts['topo']}\n```\n"
        f"```\n$ nvcc --version\n{parts['nvcc']}\n$ cat /proc/driver/nvidia/version\n{parts['proc']}```\n"
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )


def test_each_output_of_an_issue_template_is_found_whole() -> None:
    parts = {
        "collect_env": fixture_text(COLLECT_ENV),
        "smi": fixture_text(SMI_TABLE),
        "topo": fixture_text(TOPO),
        "nvcc": fixture_text(NVCC),
        "proc": fixture_text(PROC_VERSION),
    }
    found = split_paste(normalise_paste(_template(parts)))
    assert _lines(found[Ev.NVIDIA_SMI]) == _lines(normalise_paste(parts["smi"]))
    assert _lines(found[Ev.NVIDIA_SMI_TOPO]) == _lines(normalise_paste(parts["topo"]))
    # The captured nvcc output starts with its own prompt line ("root@ip-...:/# nvcc --version").
    assert _lines(found[Ev.NVCC]) == _lines(normalise_paste(parts["nvcc"]))[1:]
    assert _lines(found[Ev.PROC_DRIVER_VERSION]) == _lines(normalise_paste(parts["proc"]))
    collect_env = _lines(found[Ev.TORCH_COLLECT_ENV])
    assert collect_env[: len(_lines(parts["collect_env"]))] == _lines(normalise_paste(parts["collect_env"]))
    assert "no kernel image" not in found[Ev.TORCH_COLLECT_ENV]  # the traceback ends it


def test_outputs_pasted_without_prompts_are_found_by_their_own_shape() -> None:
    smi, lspci = fixture_text(SMI_TABLE), fixture_text(LSPCI)
    found = split_paste(normalise_paste(f"my nvidia-smi:\n{smi}\nand lspci -vv says\n{lspci}\nany idea?\n"))
    assert _lines(found[Ev.NVIDIA_SMI]) == _lines(smi)
    assert "LnkSta:" in found[Ev.LSPCI] and "any idea" not in found[Ev.LSPCI]


def test_kernel_lines_are_gathered_from_anywhere() -> None:
    # Synthetic arrangement of real line shapes (dmesg, journalctl, a bare NVRM line) between prose.
    text = (
        "dmesg shows\n[   12.345678] NVRM: API mismatch: the client has the version 535.113.01, but\n"
        "then I rebooted\nNov 02 10:11:12 host kernel: NVRM: RmInitAdapter failed! (0x22:0x56:884)\n"
        "NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x26:0xffff:1601)\n"
    )
    kernel = split_paste(text)[Ev.KERNEL_LOG].splitlines()
    assert len(kernel) == 3 and all("NVRM" in line for line in kernel)


def test_a_single_error_line_is_an_nvidia_smi_output() -> None:
    found = split_paste("Failed to initialize NVML: Driver/library version mismatch\n")
    assert found[Ev.NVIDIA_SMI].strip() == "Failed to initialize NVML: Driver/library version mismatch"


@pytest.mark.parametrize("text", ["", "\n\n", "hello\nworld\n", "$\n$ \n| |\n+\n"])
def test_text_without_outputs_gives_no_sections(text: str) -> None:
    assert set(split_paste(text)) <= {Ev.TENSORFLOW_LOG}


@given(st.text(alphabet=st.sampled_from(list("GPU0 :|+-$\n\tNVRM()[]1.TraceCUDA=lspci")), max_size=800))
def test_any_text_splits_without_raising(text: str) -> None:
    for name, section in split_paste(text).items():
        assert isinstance(name, str) and isinstance(section, str)
