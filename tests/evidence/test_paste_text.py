"""Pastes read the way people paste them: fences, quote markers, CRLF, ANSI, entities, fullwidth forms."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpudoctor.evidence.paste_text import PasteError, decode_paste, normalise_paste

# Synthetic: the real header line of nvidia-smi wrapped in every kind of pasting mark at once.
SMI_LINE = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |"


def test_fences_quotes_crlf_and_colours_are_taken_off() -> None:
    pasted = f"see below\r\n> ```console\r\n> \x1b[1;32m{SMI_LINE}\x1b[0m\r\n> ```\r\nthanks\r\n"
    assert normalise_paste(pasted) == f"see below\n{SMI_LINE}\nthanks\n"


def test_nested_quotes_of_a_reply_lose_every_marker() -> None:
    assert normalise_paste("> > Is CUDA available: False\n").strip() == "Is CUDA available: False"


def test_python_prompt_is_not_a_quote_marker() -> None:
    assert normalise_paste(">>> import torch\n>>> torch.cuda.is_available()\nFalse\n").splitlines()[0] == (
        ">>> import torch"
    )


def test_fullwidth_colons_and_ideographic_spaces_fold_to_ascii() -> None:
    # Real line shape from pytorch/pytorch#37320 (a CJK input method's colon).
    assert normalise_paste("GPU 0： Tesla P100-PCIE-16GB\n") == "GPU 0: Tesla P100-PCIE-16GB\n"


def test_html_entities_from_a_scraped_page_are_unescaped() -> None:
    assert "cuda>=12.4" in normalise_paste("requirement error: unsatisfied condition: cuda&gt;=12.4\n")


def test_details_wrappers_are_dropped() -> None:
    text = normalise_paste("<details>\n<summary>collect_env</summary>\nPyTorch version: 2.1.0\n</details>\n")
    assert text == "PyTorch version: 2.1.0\n"


@pytest.mark.parametrize("data", [b"", b"   \n\t\n", "\ufeff".encode()])
def test_empty_input_is_refused_in_one_line(data: bytes) -> None:
    with pytest.raises(PasteError, match="empty"):
        decode_paste(data, "paste.txt")


def test_binary_input_is_refused_in_one_line() -> None:
    with pytest.raises(PasteError, match="binary"):
        decode_paste(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50, "a.out")
    with pytest.raises(PasteError, match="binary"):
        decode_paste(bytes(range(1, 32)) * 100, "noise.bin")


def test_powershell_utf16_output_is_read() -> None:
    data = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\r\n".encode("utf-16")
    assert "couldn't communicate" in decode_paste(data, "smi.txt")


@given(st.binary(max_size=2000))
def test_any_bytes_decode_or_are_refused_cleanly(data: bytes) -> None:
    try:
        text = decode_paste(data, "x")
    except PasteError as exc:
        assert "\n" not in str(exc)
        return
    assert normalise_paste(text).endswith("\n")


@given(st.text(max_size=2000))
def test_any_text_normalises_without_raising(text: str) -> None:
    normalised = normalise_paste(text)
    assert "\r" not in normalised and "\x1b[" not in normalised


def test_curly_quotes_become_the_straight_ones_tools_print() -> None:
    # Real line from kundajelab/chrombpnet#49, pasted through a word processor.
    line = "“Could not load dynamic library ‘libcusolver.so.10’; dlerror: libcusolver.so.10"
    assert normalise_paste(line) == "\"Could not load dynamic library 'libcusolver.so.10'; dlerror: libcusolver.so.10\n"
