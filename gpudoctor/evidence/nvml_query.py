"""How the NVML probe asks NVML: one tolerant call, and the error record it leaves when a call fails.

Part of the NVML probe (:mod:`gpudoctor.evidence.nvml_probe`), which runs with ``python -S`` and only
gpudoctor's and pynvml's folders on ``sys.path``: this module imports nothing but the standard library.
A failed call is recorded with NVML's own error code and name, never raised; ``_DeviceQuery`` also
notices a GPU that is lost (and then stops asking it) or needs a reset.
"""

from __future__ import annotations

from typing import Any, Callable

# pynvml has no type stubs: the module, its device handles and what its calls return are untyped C
# wrappers (ctypes structs, ints, bytes).  ``Any`` stands for that surface only; records are JSON.
Nvml = Any
NvmlHandle = Any
NvmlValue = Any
ErrorRecord = dict[str, object]

# NVML error codes (nvml.h) by name, so the record does not depend on which
# constants a given nvidia-ml-py release defines.
NVML_ERROR_NAMES = {
    1: "NVML_ERROR_UNINITIALIZED",
    2: "NVML_ERROR_INVALID_ARGUMENT",
    3: "NVML_ERROR_NOT_SUPPORTED",
    4: "NVML_ERROR_NO_PERMISSION",
    5: "NVML_ERROR_ALREADY_INITIALIZED",
    6: "NVML_ERROR_NOT_FOUND",
    7: "NVML_ERROR_INSUFFICIENT_SIZE",
    8: "NVML_ERROR_INSUFFICIENT_POWER",
    9: "NVML_ERROR_DRIVER_NOT_LOADED",
    10: "NVML_ERROR_TIMEOUT",
    11: "NVML_ERROR_IRQ_ISSUE",
    12: "NVML_ERROR_LIBRARY_NOT_FOUND",
    13: "NVML_ERROR_FUNCTION_NOT_FOUND",
    14: "NVML_ERROR_CORRUPTED_INFOROM",
    15: "NVML_ERROR_GPU_IS_LOST",
    16: "NVML_ERROR_RESET_REQUIRED",
    17: "NVML_ERROR_OPERATING_SYSTEM",
    18: "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
    19: "NVML_ERROR_IN_USE",
    20: "NVML_ERROR_MEMORY",
    21: "NVML_ERROR_NO_DATA",
    22: "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
    23: "NVML_ERROR_INSUFFICIENT_RESOURCES",
    24: "NVML_ERROR_FREQ_NOT_SUPPORTED",
    25: "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
    26: "NVML_ERROR_DEPRECATED",
    27: "NVML_ERROR_NOT_READY",
    28: "NVML_ERROR_GPU_NOT_FOUND",
    29: "NVML_ERROR_INVALID_STATE",
    999: "NVML_ERROR_UNKNOWN",
}


def _error_record(exc: BaseException) -> ErrorRecord:
    code: object = getattr(exc, "value", None)
    return {
        "code": code,
        "name": NVML_ERROR_NAMES.get(code, type(exc).__name__) if isinstance(code, int) else type(exc).__name__,
        "message": str(exc),
    }


def _text(value: NvmlValue) -> NvmlValue:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def query(errors: dict[str, ErrorRecord], field: str, call: Callable[[], NvmlValue]) -> NvmlValue:
    """Call one NVML function; on failure record why under ``errors[field]`` and return None."""
    try:
        return _text(call())
    except Exception as exc:  # noqa: BLE001 - every NVML failure is evidence, not a crash
        errors[field] = _error_record(exc)
        return None


# nvml.h values, used where an older nvidia-ml-py lacks the name.
_ERROR_INVALID_ARGUMENT, _ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND = 2, 3, 13
_ERROR_CORRUPTED_INFOROM, _ERROR_GPU_IS_LOST, _ERROR_RESET_REQUIRED = 14, 15, 16


def _deferred(pynvml: Nvml, function: str, *args: object) -> Callable[[], NvmlValue]:
    """``pynvml.<function>(*args)``, looked up only when called: a binding too old to have it fails inside
    :func:`query`, where that is recorded like any other NVML error."""
    return lambda: getattr(pynvml, function)(*args)


def _const(pynvml: Nvml, name: str, fallback: int) -> int:
    """An NVML constant from the binding, else nvml.h's value.

    Only plain ints are taken: nvidia-ml-py defines ``NVML_P2P_CAPS_INDEX_READ = 0,`` (a tuple), which
    ctypes would refuse as an argument.
    """
    value = getattr(pynvml, name, fallback)
    return value if isinstance(value, int) and not isinstance(value, bool) else fallback


class _DeviceQuery:
    """``query`` for one GPU that notices a lost GPU (and then stops asking it) or one that needs a reset."""

    def __init__(self, errors: dict[str, ErrorRecord]) -> None:
        self.errors = errors
        self.lost = False
        self.reset_required = False

    def __call__(
        self, field: str, call: Callable[[], NvmlValue], errors: dict[str, ErrorRecord] | None = None
    ) -> NvmlValue:
        # A lost GPU answers every call with GPU_IS_LOST, some only after a long wait: once is enough.
        if self.lost:
            return None
        sink = self.errors if errors is None else errors
        value = query(sink, field, call)
        if value is None and field in sink:
            code = sink[field].get("code")
            self.lost = self.lost or code == _ERROR_GPU_IS_LOST
            self.reset_required = self.reset_required or code == _ERROR_RESET_REQUIRED
        return value

    def code(self, field: str) -> object:
        return (self.errors.get(field) or {}).get("code")
