"""One line of a ``collect_env`` report, as people paste it: which of the report's keys it holds, and its value.

Reports reach gpudoctor hand-edited and re-wrapped: quoted in Markdown (``> PyTorch version: 1.5.0``),
indented four spaces as a code block, bulleted from an issue template (``- PyTorch Version (e.g., 1.0): 1.5``),
with a colon lost (``Is CUDA available No``), a fullwidth colon (``：``), tabs, ANSI colours or a Markdown fence
around them.  :func:`clean_line` takes all of that off one line; :func:`known_key` then finds the report's key
in it, case-insensitively, with or without its colon.  Both are pure and never raise.
"""

from __future__ import annotations

import re
import unicodedata

from gpudoctor.evidence.keys import EvidenceKey
from gpudoctor.facts.sources_state import Missing, Why

# collect_env writes these for "unknown" (None → "Could not collect"; no CUDA at all → "No CUDA").
UNKNOWN_WORDS = {"", "could not collect", "n/a", "none", "no cuda", "unknown"}
# What each of those words says about the value.  collect_env prints "Could not collect" for any value it got
# None for (a command that failed, or nothing to find: the report cannot tell which), "N/A" where the question
# does not arise (HIP fields of a CUDA build, libc off Linux), "No CUDA" for the CUDA fields when neither torch nor
# nvidia-smi found a GPU, and "None" for the build's CUDA of a CPU-only wheel.
MISSING_WHY = {
    "could not collect": Why.FAILED,
    "unknown": Why.FAILED,
    "n/a": Why.NOT_APPLICABLE,
    "none": Why.ABSENT,
    "no cuda": Why.ABSENT,
}
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}

# The report's keys (both layouts use the same words) → CollectEnvReport attribute.
KEYS = {
    "pytorch version": "torch_version",
    "is debug build": "debug_build",
    "cuda used to build pytorch": "cuda_build",
    "rocm used to build pytorch": "rocm_build",
    "os": "os",
    "gcc version": "gcc",
    "libc version": "libc",
    "python version": "python_version",
    "python platform": "python_platform",
    "is cuda available": "cuda_available",
    "cuda runtime version": "cuda_runtime",
    "cuda_module_loading set to": "cuda_module_loading",
    "gpu models and configuration": "gpu_names",
    "nvidia driver version": "driver_version",
    "cudnn version": "cudnn",
    "hip runtime version": "hip_runtime",
    "miopen runtime version": "miopen_runtime",
    "is xpu available": "xpu_available",
    "xpu used to build pytorch": "xpu_build",
    # Printed only when torch.xpu is available; each is followed by "* ..." lines.
    "intel gpu driver version": "intel_gpu_driver",
    "intel gpu models onboard": "xpu_gpu_names",
    "intel gpu models detected": "xpu_detected",
}
# Keys the report has that carry nothing gpudoctor uses; recognised so they end a multi-line value.
OTHER_KEYS = {
    "clang version",
    "cmake version",
    "is xnnpack available",
    "caching allocator config",
    "cpu",
    "versions of relevant libraries",
}
# Keys of two words or more, longest first: the only ones read without their colon ("PyTorch version 1.5.0").
# A one-word key ("OS", "CPU") without a colon is too likely to be the start of any sentence.
_BARE_KEYS = sorted((k for k in (*KEYS, *OTHER_KEYS) if " " in k), key=len, reverse=True)

_KEY_LINE = re.compile(r"^(?P<key>[A-Za-z][A-Za-z0-9_ \t./(),-]*?)[ \t]*:(?:[ \t]*(?P<value>.*?))?[ \t]*$")
# An issue template's hint after a key: "PyTorch Version (e.g., 1.0)".
_EXAMPLE_HINT = re.compile(r"\s*\(e\.g\.[^)]*\)?", re.IGNORECASE)
# What a paste puts before a line: Markdown quote markers ("> ", "> > "), list bullets ("- ", "* ").
_QUOTE_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_LINE_PREFIX = re.compile(r"^[ \t]*(?:>[ \t]?)+|^[ \t]*[-*•][ \t]+")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})")


def clean_line(line: str, bullets: bool = True) -> str:
    """``line`` without what pasting added: ANSI codes, quote markers, a list bullet (unless ``bullets`` is
    False: torch's own warnings list architectures as "- 7.5 which ..."), indentation, fullwidth forms (NFKC:
    "：" → ":"), trailing blanks.  A Markdown fence line comes back empty, like a blank line."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if not line.isascii():
        line = unicodedata.normalize("NFKC", line)
    if _FENCE.match(line):
        return ""
    prefix = _LINE_PREFIX if bullets else _QUOTE_PREFIX
    for _ in range(2):  # "> - key: value": a quoted bullet
        stripped = prefix.sub("", line, count=1)
        if stripped == line:
            break
        line = stripped
    return line.strip()


def _normal_key(raw: str) -> str:
    return " ".join(_EXAMPLE_HINT.sub("", raw).split()).lower()


def known_key(line: str) -> tuple[str, str | None] | None:
    """(the report's key, lower-case, single-spaced; its raw value or None) when the cleaned ``line`` holds one
    of the report's keys: "Key: value", "Key   : value", "Key value" (a lost colon), "KEY:" (value below)."""
    match = _KEY_LINE.match(line)
    if match:
        key = _normal_key(match.group("key"))
        if key in KEYS or key in OTHER_KEYS:
            return key, match.group("value")
    spaced = " ".join(line.split())
    head = spaced[: len(_BARE_KEYS[0]) + 1].lower()
    for key in _BARE_KEYS:
        if head.startswith(key) and (len(spaced) == len(key) or spaced[len(key)] in " =-"):
            return key, spaced[len(key) :].lstrip(" =-") or None
    return None


def value_of(raw: str | None) -> str | None:
    """The value, or None for collect_env's words for "unknown"."""
    if raw is None:
        return None
    value = raw.strip()
    return None if value.lower() in UNKNOWN_WORDS else value


def bool_of(raw: str | None) -> bool | None:
    """ "True"/"Yes" → True, "False"/"No" → False (any case), anything else → None."""
    value = (raw or "").strip().rstrip(".").lower()
    return True if value in _TRUE else False if value in _FALSE else None


def missing_of(raw: str | None) -> Missing | None:
    """Why a line's value is missing ("Could not collect" → FAILED, ...); None when it holds a value."""
    word = (raw or "").strip()
    why = MISSING_WHY.get(word.lower())
    return Missing(why, EvidenceKey.TORCH_COLLECT_ENV, word) if why is not None else None
