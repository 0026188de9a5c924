"""collect_env reports read the way people paste them: quoted, indented, re-typed, re-wrapped, decorated.

Real pastes first (a quoted report from a public issue, quoted verbatim with its URL; the accuracy corpus's
hand-edited reports, read in place), then the real RTX 5090 D report of the captured corpus put through each
way a paste gets changed (SYNTHETIC decorations of a real text): the facts read from it must not change.
Hypothesis then composes the decorations at random, and feeds paste-shaped garbage: nothing raises.
"""

from __future__ import annotations

import pathlib
import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpudoctor.facts.collect_env import parse_collect_env, torch_facts_from_collect_env
from gpudoctor.facts.collect_env_lines import bool_of, clean_line, known_key
from gpudoctor.facts.framework_model import CollectEnvReport, TorchFacts
from tests.helpers.fixtures import REPO, fixture_text, real_fixtures_dir

RTX_5090D = "E/pytorch-150733-rtx5090d-sm120-cu126-collect_env-excerpt.txt"
CORPUS = REPO / "benchmarks" / "accuracy_corpus" / "collect_env"

# https://github.com/pytorch/pytorch/issues/40682 (the reporter's comment, quoted with "> " in Markdown;
# the excerpt stops after the pip lines).  Note the typo "Collecting`environment" and "Yes"/"No" for booleans.
# (Built from its lines, so that the blank quoted lines keep their trailing space: "> ".)
REAL_QUOTED_40682 = "\n".join(
    (
        "> Collecting`environment information...",
        "> PyTorch version: 1.5.0+cu101",
        "> Is debug build: No",
        "> CUDA used to build PyTorch: 10.1",
        "> ",
        "> OS: Microsoft Windows Server 2019 Standard",
        "> GCC version: (MinGW.org GCC Build-20200227-1) 9.2.0",
        "> CMake version: Could not collect",
        "> ",
        "> Python version: 3.7",
        "> Is CUDA available: Yes",
        "> CUDA runtime version: 10.1.243",
        "> GPU models and configuration:",
        "> GPU 0: TITAN RTX",
        "> GPU 1: TITAN RTX",
        "> ",
        "> Nvidia driver version: 442.92",
        "> cuDNN version: C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v10.1\\bin\\cudnn64_7.dll",
        "> ",
        "> Versions of relevant libraries:",
        "> [pip] numpy==1.19.0",
        "> [pip] numpydoc==0.9.1",
        "> [pip] torch==1.5.0+cu101",
        "> [pip] torchvision==0.6.0+cu101",
        "",
    )
)


def _facts(report: CollectEnvReport) -> tuple[object, ...]:
    """The fields checks read, as one comparable value."""
    return (
        report.torch_version,
        report.debug_build,
        report.cuda_build,
        report.os,
        report.python_version,
        report.cuda_available,
        report.cuda_runtime,
        tuple(report.gpu_names),
        report.driver_version,
        tuple(report.cudnn),
        report.unsupported_gpu,
        report.unsupported_capability,
        tuple(report.supported_arches),
        tuple(sorted(report.pip_packages.items())),
    )


def test_real_quoted_report_40682():
    report = parse_collect_env(REAL_QUOTED_40682)
    assert report.torch_version == "1.5.0+cu101" and report.cuda_build == "10.1"
    assert report.debug_build is False and report.cuda_available is True
    assert report.gpu_names == ["TITAN RTX", "TITAN RTX"] and report.driver_version == "442.92"
    assert report.cuda_runtime == "10.1.243" and report.python_version == "3.7"
    assert report.os == "Microsoft Windows Server 2019 Standard"
    assert report.pip_packages["torch"] == "1.5.0+cu101"


def _corpus_case(name: str) -> str:
    path = CORPUS / f"{name}.txt"
    if not path.is_file():
        pytest.skip(f"accuracy corpus case {name} not available")
    return path.read_text(encoding="utf-8")


def test_real_report_with_a_lost_colon_and_fullwidth_colons_37320():
    # "PyTorch version 1.5.0" (no colon), "Os:" and "GPU 0：Tesla P100-PCIE-16GB" (U+FF1A), as pasted.
    report = parse_collect_env(_corpus_case("pytorch-37320-fullwidth-colons-driver-410"))
    assert report.torch_version == "1.5.0" and report.cuda_build == "10.2"
    assert report.os == "Ubuntu 18.04.3 LTS" and report.cuda_available is False
    assert report.gpu_names == ["Tesla P100-PCIE-16GB"] * 4
    assert report.driver_version == "410.104" and report.cuda_runtime == "10.0.130"


def test_real_report_indented_as_a_code_block_44303():
    report = parse_collect_env(_corpus_case("pytorch-44303-indented-cpu-only-torch131"))
    assert report.torch_version == "1.3.1" and report.cuda_available is False
    assert report.gpu_names == ["GeForce RTX 2080 Ti"] and report.driver_version == "430.64"
    assert report.cuda_runtime == "10.1.105" and len(report.cudnn) == 2
    assert report.missing["cuda_build"].error == "Could not collect"  # a CPU build, said the report's way


# --------------------------------------------------------------------------- one decoration at a time

# The report's keys as collect_env writes them (the lines each decoration below changes).
_KEY = re.compile(
    r"^(?P<key>PyTorch version|Is debug build|CUDA used to build PyTorch|ROCM used to build PyTorch|OS|GCC version|"
    r"Clang version|CMake version|Libc version|Python version|Python platform|Is CUDA available|CUDA runtime version|"
    r"CUDA_MODULE_LOADING set to|GPU models and configuration|Nvidia driver version|cuDNN version)"
    r":(?P<gap>[ \t]*)(?P<value>.*)$"
)


def _key_lines(text: str, change: Callable[[re.Match[str]], str]) -> str:
    return "\n".join((change(m) if (m := _KEY.match(line)) else line) for line in text.split("\n"))


def _no_colon(m: re.Match[str]) -> str:
    if " " not in m["key"]:  # a one-word key ("OS") is read only with its colon
        return m.group(0)
    return f"{m['key']} {m['value']}".rstrip()


def _wrapped(m: re.Match[str]) -> str:
    return f"{m['key']}:\n{m['value']}" if m["value"] else m.group(0)


def _yes_no(m: re.Match[str]) -> str:
    words = {"True": "Yes", "False": "No"}
    return f"{m['key']}:{m['gap']}{words.get(m['value'], m['value'])}"


def _bulleted(m: re.Match[str]) -> str:
    hint = " (e.g., 1.0)" if m["key"] == "PyTorch version" else ""
    return f"- {m['key']}{hint}:{m['gap']}{m['value']}"


DECORATIONS: dict[str, Callable[[str], str]] = {
    "quoted": lambda t: "\n".join(f"> {line}" for line in t.split("\n")),
    "nested quote": lambda t: "\n".join(f"> > {line}" for line in t.split("\n")),
    "indented": lambda t: "\n".join(f"    {line}" for line in t.split("\n")),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "fenced": lambda t: f"Here is my environment:\n```text\n{t}\n```\nThanks!",
    "tabs": lambda t: _key_lines(t, lambda m: f"{m['key']}:\t{m['value']}"),
    "spaced": lambda t: _key_lines(t, lambda m: f"{m['key']}   :   {m['value']}"),
    "upper case": lambda t: _key_lines(t, lambda m: f"{m['key'].upper()}:{m['gap']}{m['value']}"),
    "lower case": lambda t: _key_lines(t, lambda m: f"{m['key'].lower()}:{m['gap']}{m['value']}"),
    "no colon": lambda t: _key_lines(t, _no_colon),
    "fullwidth colon": lambda t: _key_lines(t, lambda m: f"{m['key']}：{m['value']}"),
    "wrapped": lambda t: _key_lines(t, _wrapped),
    "yes/no": lambda t: _key_lines(t, _yes_no),
    "bulleted": lambda t: _key_lines(t, _bulleted),
    "ansi": lambda t: _key_lines(t, lambda m: f"\x1b[1m{m['key']}\x1b[0m:{m['gap']}{m['value']}"),
}


def _real_report() -> str:
    return fixture_text(RTX_5090D)


@pytest.mark.parametrize("name", sorted(DECORATIONS))
def test_each_decoration_keeps_every_fact(name: str):
    plain = _real_report()
    expected = _facts(parse_collect_env(plain))
    assert expected[0] == "2.6.0+cu126" and expected[8] == "570.124.04"  # the plain report reads fully
    decorated = DECORATIONS[name](plain)
    assert decorated != plain
    assert _facts(parse_collect_env(decorated)) == expected


def test_yes_no_and_any_case_read_as_booleans():
    for word, value in (("Yes", True), ("no", False), ("TRUE", True), ("False.", False), ("maybe", None)):
        assert bool_of(word) is value


def test_clean_line_and_known_key():
    assert clean_line("> > - \x1b[1mPyTorch version\x1b[0m： 2.6.0") == "PyTorch version: 2.6.0"
    assert clean_line("```text") == ""
    assert clean_line("  - 7.5 which supports hardware CC", bullets=False) == "- 7.5 which supports hardware CC"
    assert known_key("Is CUDA available No") == ("is cuda available", "No")
    assert known_key("PyTorch Version (e.g., 1.0): 1.5") == ("pytorch version", "1.5")
    assert known_key("GPU 0: NVIDIA GeForce RTX 3090") is None
    assert known_key("OS Ubuntu") is None  # a one-word key needs its colon
    assert known_key("Nvidia driver version") == ("nvidia driver version", None)


# --------------------------------------------------------------------------- properties

_REAL = real_fixtures_dir() / RTX_5090D


@pytest.mark.skipif(not _REAL.is_file(), reason="the real collect_env report (fixtures E) is absent")
@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(sorted(DECORATIONS)), min_size=1, max_size=4, unique=True))
def test_decorations_composed_keep_every_fact(names: list[str]):
    plain = _REAL.read_text(encoding="utf-8", errors="replace")
    # Line-level edits first, then what wraps whole lines (quoting, indenting, fences, CRLF), as a paste does.
    wrapping = ("quoted", "nested quote", "indented", "fenced", "crlf")
    decorated = plain
    for name in sorted(names, key=lambda n: n in wrapping):
        decorated = DECORATIONS[name](decorated)
    if "wrapped" in names and "no colon" in names:
        return  # a key that lost its colon and its value to the next line is two unlabeled lines: unreadable
    assert _facts(parse_collect_env(decorated)) == _facts(parse_collect_env(plain))


_PASTE_PIECES = st.sampled_from(
    [
        "PyTorch version",
        "Is CUDA available",
        "GPU models and configuration",
        "Nvidia driver version",
        "CUDA runtime version",
        "CPU",
        "cuDNN version",
        ":",
        "：",
        " ",
        "\t",
        "\n",
        "\r\n",
        "> ",
        "- ",
        "```",
        "\x1b[31m",
        "GPU 0",
        "Yes",
        "No",
        "Could not collect",
        "No CUDA",
        "[pip3] torch==2.1.0",
        "[conda] torch 2.1.0 py3.10 pytorch",
        "==========",
        "2.6.0+cu126",
        "sm_120 is not compatible with the current PyTorch installation",
        "supports CUDA capabilities sm_50",
        "\u00a0",
        "\ufeff",
        "\x00",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_PASTE_PIECES, st.text(max_size=8)), max_size=80).map("".join))
def test_paste_shaped_garbage_never_raises(text: str):
    report = parse_collect_env(text)
    assert isinstance(report, CollectEnvReport)
    for value in (report.torch_version, report.driver_version, report.cuda_runtime, report.os):
        assert value is None or (isinstance(value, str) and value == value.strip() and value)
    assert all(isinstance(name, str) and name for name in report.gpu_names)
    assert report.cuda_available in (True, False, None)
    assert isinstance(torch_facts_from_collect_env(report), TorchFacts)


def test_the_module_stays_small():
    for name in ("collect_env.py", "collect_env_lines.py"):
        lines = (REPO / "gpudoctor" / "facts" / name).read_text(encoding="utf-8").count("\n")
        assert lines <= 400, (name, lines)


def test_real_reports_of_the_corpus_parse_at_least_as_well_when_quoted():
    paths = sorted(pathlib.Path(CORPUS).glob("*.txt")) if CORPUS.is_dir() else []
    if not paths:
        pytest.skip("accuracy corpus not available")
    for path in paths:
        plain = path.read_text(encoding="utf-8", errors="replace")
        quoted = DECORATIONS["quoted"](plain)
        assert _facts(parse_collect_env(quoted)) == _facts(parse_collect_env(plain)), path.name
