"""An NGC container's start-up banner in any free text of the evidence (a paste, a log): which image, and what it
said about the host driver ("This container was built for NVIDIA Driver Release 545.23 or later, but version
525.85.12 was detected and compatibility mode is UNAVAILABLE.").  Tolerant: never raises.

The shapes read are those of real banners (tests/captured/ngc): the "== PyTorch ==" header between rules of "=",
"NVIDIA Release 23.10 (build 71422337)" (the release can be empty: "NVIDIA Release  (build 236656226)"),
"PyTorch Version 2.1.0a0+32f93b1", the ERROR/WARNING on an old driver (wrapped over two lines, sometimes with
"butversion" run together), "NOTE: CUDA Forward Compatibility mode ENABLED. Using CUDA 12.0 driver version
525.85.11 with kernel driver version 515.86.01.", "WARNING: The NVIDIA Driver was not detected.", and "ERROR: The
NVIDIA Driver is present, but CUDA failed to initialize. ... (error 804)".  Log prefixes (timestamps, "> " quotes)
are dropped before reading, so a banner copied out of `docker logs -t` or a quoted reply reads the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gpudoctor.facts.platform_model import ContainerBanner

_MAX_TEXT = 2_000_000  # longer texts are read in their first part only
_MAX_QUOTE = 300
_VERSION = r"\d{2,4}(?:\.\d{1,4}){0,2}"
_PREFIX = re.compile(
    r"^[ \t]*(?:>[ \t]?)*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?Z?\]?[ \t]+)?(?:>[ \t]?)*", re.M
)
_HEADER = re.compile(r"^=+[ \t]*\n==[ \t]*([^=\n]{1,60}?)[ \t]*==[ \t]*\n=+[ \t]*$", re.M)
_RELEASE = re.compile(r"\bNVIDIA Release[ \t]+(\d{2}\.\d{2}(?:\.\d{1,2})?)?[ \t]*\(build[ \t]*(\d{1,12})\)")
_FRAMEWORK = re.compile(r"^(PyTorch|TensorFlow|JAX|CUDA) Version[ \t]+(\S{1,60})", re.M)
_BUILT_FOR = re.compile(
    rf"(?P<level>ERROR|WARNING)?:?\s*This container was built for NVIDIA Driver Release (?P<built>{_VERSION}) or later"
    rf"(?:,\s*but\s*version (?P<found>{_VERSION}) was detected)?"
    r"(?:(?:\s*and)?,?\s*compatibility mode is (?P<mode>UNAVAILABLE|AVAILABLE))?",
    re.I,
)
_FORWARD = re.compile(
    rf"CUDA Forward Compatibility mode ENABLED\.?\s*Using CUDA (?P<cuda>\d{{1,2}}\.\d{{1,2}}) driver version "
    rf"(?P<compat>{_VERSION}) with kernel driver version (?P<kernel>{_VERSION})",
    re.I,
)
_FORWARD_BARE = re.compile(r"CUDA Forward Compatibility mode ENABLED", re.I)
_NO_DRIVER = re.compile(r"The NVIDIA Driver was not detected\.\s*GPU functionality will not be available", re.I)
_INIT_FAILED = re.compile(
    r"The NVIDIA Driver is present, but CUDA failed to initialize\.\s*GPU functionality will not be available\.?"
    r"(?:\s*\[\[\s*(?P<why>[^\]\n]{1,120}?)\s*\]\])?",
    re.I,
)
_CUINIT = re.compile(r"\[\[\s*CUDA Driver UNAVAILABLE \(cuInit\(0\) returned (\d{1,4})\)\s*\]\]?")
# Words only a banner has: texts without any of them are not read further.
_NEEDLE = re.compile(r"NVIDIA Release|NVIDIA Driver|Forward Compatibility|compatibility mode", re.IGNORECASE)


def _clean(text: str) -> str:
    return _PREFIX.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _quote(text: str) -> str:
    flat = _flat(text)
    return flat if len(flat) <= _MAX_QUOTE else flat[: _MAX_QUOTE - 1] + "…"


def parse_container_banner(text: str) -> ContainerBanner | None:
    """The banner in ``text``, or None when there is none.  Junk of any kind gives None, never an exception."""
    if not isinstance(text, str) or not text:
        return None
    text = text[:_MAX_TEXT]
    if _NEEDLE.search(text) is None:  # one pass, no lowered copy: most texts hold no banner at all
        return None
    clean = _clean(text)
    flat = _flat(clean)
    header = _HEADER.search(clean)
    release_match = _RELEASE.search(flat)
    product = header.group(1).strip() if header else None
    framework = _FRAMEWORK.search(clean)
    if product is None and framework is not None:
        product = framework.group(1)
    release = release_match.group(1) if release_match and release_match.group(1) else None
    built_for = detected = compat_mode = quoted = None
    no_gpu = False
    verdict = _BUILT_FOR.search(flat)
    forward = _FORWARD.search(flat)
    init_failed = _INIT_FAILED.search(flat)
    if verdict is not None:
        built_for, detected = verdict.group("built"), verdict.group("found")
        compat_mode = "unavailable" if (verdict.group("mode") or "").upper() == "UNAVAILABLE" else None
        quoted = verdict.group(0)
        cuinit = _CUINIT.search(flat, verdict.end(), verdict.end() + 120)
        if cuinit:
            quoted += f" [[CUDA Driver UNAVAILABLE (cuInit(0) returned {cuinit.group(1)})]]"
    elif init_failed is not None and "804" in (init_failed.group("why") or ""):
        # NGC's words when the forward-compatibility libcuda met a GPU that cannot use it (error 804).
        compat_mode, quoted = "unavailable", init_failed.group(0)
    if forward is not None:
        compat_mode = "enabled"
        built_for = built_for or forward.group("compat")
        detected = forward.group("kernel")
        quoted = forward.group(0)
    elif compat_mode is None and _FORWARD_BARE.search(flat):
        compat_mode, quoted = "enabled", quoted or "CUDA Forward Compatibility mode ENABLED"
    if _NO_DRIVER.search(flat):
        no_gpu = True
        quoted = quoted or "WARNING: The NVIDIA Driver was not detected. GPU functionality will not be available."
    if not any((product, release_match, built_for, compat_mode, no_gpu)):
        return None
    return ContainerBanner(
        product=product,
        release=release,
        built_for_driver=built_for,
        detected_driver=detected,
        compat_mode=compat_mode,
        no_gpu=no_gpu,
        quoted=_quote(quoted) if quoted else None,
    )


def _weight(banner: ContainerBanner) -> int:
    """How much a banner says: a verdict on the driver outranks a bare header."""
    return (
        4 * (banner.compat_mode is not None)
        + 2 * bool(banner.built_for_driver)
        + 2 * banner.no_gpu
        + bool(banner.release)
        + bool(banner.product)
    )


def container_banner(texts: Iterable[tuple[str, str]]) -> ContainerBanner | None:
    """The most telling NGC banner in the evidence's free texts (``Facts.free_texts``: (source, text) pairs), a
    verdict on the driver first; None when there is none."""
    best: ContainerBanner | None = None
    for _, text in texts:
        banner = parse_container_banner(text)
        if banner is not None and (best is None or _weight(banner) > _weight(best)):
            best = banner
    return best
