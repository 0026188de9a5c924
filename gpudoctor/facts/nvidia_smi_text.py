"""Facts from nvidia-smi's human output: the plain table, ``-L``, and its error messages.

The table is meant for eyes, not programs, yet it is what people paste into
issues and what a machine without ``-q -x`` support (or a snapshot someone
sent) gives us.  So the parser keys on what stays put across layouts (the
``|`` cells, a PCI address in the second cell, ``MiB`` pairs) rather than on
column offsets, which changed in 495, 535, 550 and 590.

Everything here is a pure ``text -> facts`` function that never raises: a
line it does not understand is skipped, a value it cannot read is ``None``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpudoctor.facts.model import GpuInfo, MigDevice, SmiError, SmiReport
from gpudoctor.facts.pci_address import normalize_bus_id

# Stable keys for nvidia-smi / NVML failures; checks attach causes and fixes to these.
ERROR_KINDS: dict[str, str] = {
    "couldnt_communicate": "nvidia-smi could not talk to the kernel driver (module not loaded or not built for this kernel)",
    "version_mismatch": "NVML's user-space library and the loaded kernel module are different driver versions",
    "nvml_unknown_error": "NVML initialisation failed with 'Unknown Error' (in containers: device access lost)",
    "nvml_init_failed": "NVML initialisation failed for another stated reason (see detail)",
    "no_devices": "the driver is loaded but reports no NVIDIA devices",
    "gpu_lost": "NVML cannot get a handle for one GPU (GPU is lost / Unknown Error); detail has its bus id",
    "gpu_error_state": "the table shows ERR! for a GPU: NVML could not read it (often a GPU fallen off the bus)",
    "no_permission": "the caller may not access the GPU devices (Insufficient Permissions)",
    "library_not_found": "nvidia-smi could not find libnvidia-ml.so (driver user space missing or not on the path)",
    "command_not_found": "the shell found no nvidia-smi (driver user space not installed or not on PATH)",
    "option_error": "nvidia-smi rejected its command-line options (e.g. an option this version does not know)",
    "unparsable": "the output is neither a known nvidia-smi layout nor a known error message",
    "truncated": "the output stops early or is damaged; the facts hold only what came before the damage",
}

_UNKNOWN_VALUES = {"", "n/a", "[n/a]", "not supported", "[not supported]", "err!", "unknown error", "[unknown error]"}


def known(value: str | None) -> str | None:
    """The stripped value, or ``None`` for nvidia-smi's ways of saying "unknown"."""
    if value is None:
        return None
    value = value.strip()
    return None if value.lower() in _UNKNOWN_VALUES else value


def to_int(digits: str | None) -> int | None:
    """``int()`` that answers ``None`` instead of raising (odd digits, 5000-digit numbers)."""
    try:
        return int(digits) if digits is not None else None
    except ValueError:
        return None


def parse_int(value: str | None) -> int | None:
    """An integer from text such as ``"16x"`` or ``"3"``; ``None`` otherwise."""
    value = known(value)
    if value is None:
        return None
    match = re.fullmatch(r"([0-9]+)\s*x?", value)
    return to_int(match.group(1)) if match else None


def parse_mib(value: str | None) -> int | None:
    """``"81559MiB"`` / ``"81559 MiB"`` -> 81559; ``None`` for anything else."""
    value = known(value)
    if value is None:
        return None
    match = re.fullmatch(r"([0-9]+)\s*MiB", value)
    return to_int(match.group(1)) if match else None


# --------------------------------------------------------------------------- errors

# Each pattern is anchored to a whole line so a process name or a GPU name in a
# table can never be mistaken for an error message.
_LINE_ERRORS: list[tuple[str, re.Pattern[str]]] = [
    ("library_not_found", re.compile(r"NVIDIA-SMI couldn't find libnvidia-ml\.so library.*", re.I)),
    (
        "couldnt_communicate",
        re.compile(r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.*", re.I),
    ),
    ("version_mismatch", re.compile(r"Failed to initialize NVML: Driver/library version mismatch.*", re.I)),
    ("nvml_unknown_error", re.compile(r"Failed to initialize NVML: Unknown Error\.?", re.I)),
    # before nvml_init_failed: "Failed to initialize NVML: Insufficient Permissions" is this kind
    ("no_permission", re.compile(r"(?!\|).*\bInsufficient Permissions\b.*", re.I)),  # not inside a table cell
    ("nvml_init_failed", re.compile(r"Failed to initialize NVML:\s*(?P<reason>.*)", re.I)),
    (
        "gpu_lost",
        re.compile(
            r"Unable to determine the device handle for GPU\s*(?P<bus>[0-9A-Fa-f:.]+)\s*:\s*(?P<reason>.*)", re.I
        ),
    ),
    ("no_devices", re.compile(r"No devices were found\.?", re.I)),
    (
        "option_error",
        re.compile(r"(ERROR: Option .*|Invalid combination of input arguments.*|ERROR: Unknown option.*)", re.I),
    ),
    (
        "command_not_found",
        re.compile(r"(?:.*: )?nvidia-smi: (?:command )?not found|'nvidia-smi' is not recognized as .*", re.I),
    ),
]
_NVML_LIBRARY_VERSION = re.compile(r"NVML library version:\s*(?P<version>[0-9][0-9.]*[0-9])", re.I)


def classify_smi_error(text: str) -> SmiError | None:
    """The known nvidia-smi / NVML failure message in ``text``; the most telling one when several are."""
    if not isinstance(text, str) or not text:
        return None
    lines = [line.strip() for line in text.splitlines()]
    for kind, pattern in _LINE_ERRORS:
        hits = [m for m in map(pattern.fullmatch, lines) if m is not None]
        if not hits:
            continue
        first = hits[0]
        detail = None
        if kind == "version_mismatch":
            # drivers from about 535 on name the library's version on the next line
            version = _NVML_LIBRARY_VERSION.search(text)
            detail = version.group("version") if version else None
        elif kind == "nvml_init_failed":
            detail = known(first.group("reason"))
        elif kind == "gpu_lost":
            # one line per lost GPU; keep them all, joinable with the other sources' bus ids
            buses = [normalize_bus_id(m.group("bus").rstrip(":")) or m.group("bus") for m in hits]
            detail = ",".join(dict.fromkeys(buses))
        return SmiError(kind=kind, message=first.group(0), detail=detail)
    return None


# --------------------------------------------------------------------------- -L

# Real lines are under 200 characters; the patterns below backtrack quadratically
# on a megabyte of blanks or digits, so longer "lines" are not read as rows.
_MAX_LINE = 1000

_LIST_GPU = re.compile(r"GPU\s+(?P<index>[0-9]+):\s*(?P<name>.*?)\s*(?:\(UUID:\s*(?P<uuid>[^)\s]+)\s*\))?")
_LIST_MIG = re.compile(r"MIG\s+(?P<profile>\S+)\s+Device\s+(?P<index>[0-9]+):\s*(?:\(UUID:\s*(?P<uuid>[^)\s]+)\s*\))?")


def parse_nvidia_smi_list(text: str) -> list[GpuInfo]:
    """GPUs (with their MIG devices) from ``nvidia-smi -L``; lines it does not know are skipped."""
    # Each GPU line with the MIG lines under it, built into one GpuInfo at the end.
    blocks: list[tuple[GpuInfo, list[MigDevice]]] = []
    if not isinstance(text, str):
        return []
    for raw in text.splitlines():
        line = raw.strip()
        if len(line) > _MAX_LINE:
            continue
        gpu = _LIST_GPU.fullmatch(line)
        if gpu:
            parent = GpuInfo(index=to_int(gpu.group("index")), name=known(gpu.group("name")), uuid=gpu.group("uuid"))
            blocks.append((parent, []))
            continue
        mig = _LIST_MIG.fullmatch(line)
        if mig and blocks:  # a MIG line belongs to the GPU line above it
            parent, migs = blocks[-1]
            migs.append(
                MigDevice(
                    gpu_index=parent.index,
                    mig_device_index=to_int(mig.group("index")),
                    profile=mig.group("profile"),
                    uuid=mig.group("uuid"),
                )
            )
    return [replace(parent, mig_devices=migs) if migs else parent for parent, migs in blocks]


# --------------------------------------------------------------------------- table

_HEADER_DRIVER = re.compile(r"(?:Driver|KMD) Version:\s*(?P<value>[^\s|]+)")  # 610 says "KMD Version"
_HEADER_CUDA = re.compile(r"CUDA (?:UMD )?Version:\s*(?P<value>[^\s|]+)")  # 610 says "CUDA UMD Version"
_PCI_IN_CELL = re.compile(r"(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])")
# "0  NVIDIA A40   On": the last word is Persistence-M on Linux, Driver-Model on Windows
_GPU_FIRST_CELL = re.compile(r"(?P<index>[0-9]+)\s+(?P<name>.*?)\s*(?<!\S)(?P<mode>On|Off|WDDM|TCC|MCDM|N/A|ERR!)?")
_MIB_PAIR = re.compile(r"(?P<used>[0-9]+)\s*MiB\s*/\s*(?P<total>[0-9]+)\s*MiB")
_COMPUTE_MODES = {
    "default": "Default",
    "e. process": "Exclusive_Process",
    "e. thread": "Exclusive_Thread",
    "exclusive_process": "Exclusive_Process",
    "exclusive_thread": "Exclusive_Thread",
    "prohibited": "Prohibited",
}
_COMPUTE_MODE_IN_CELL = re.compile(
    r"(Default|E\. Process|E\. Thread|Exclusive_Process|Exclusive_Thread|Prohibited)\s*$", re.I
)
_MIG_FIRST_CELL = re.compile(r"(?P<gpu>[0-9]+)\s+(?P<gi>[0-9]+|N/A)\s+(?P<ci>[0-9]+|N/A)\s+(?P<dev>[0-9]+)")


def _cells(line: str) -> list[str] | None:
    """The cells of a ``| a | b | c |`` row, or ``None`` when the line is no such row."""
    if not 2 <= len(line) <= _MAX_LINE or not (line.startswith("|") and line.endswith("|")):
        return None
    return line[1:-1].split("|")


def _read_header(lines: list[str]) -> tuple[bool, str | None, str | None]:
    """Whether the table's header line is there, and the driver and CUDA versions it names."""
    for line in lines:
        if "NVIDIA-SMI" in line and "Version:" in line:
            driver = _HEADER_DRIVER.search(line)
            cuda = _HEADER_CUDA.search(line)
            return (
                True,
                known(driver.group("value")) if driver else None,
                known(cuda.group("value")) if cuda else None,
            )
    return False, None, None


def _start_gpu(cells: list[str]) -> GpuInfo | None:
    """A GPU from the first row of its block: ``| 0  NAME  On | 00000000:01:00.0 Off | ECC |``."""
    first = _GPU_FIRST_CELL.fullmatch(cells[0].strip())
    bus = _PCI_IN_CELL.search(cells[1])
    if first is None or bus is None:
        return None
    mode = first.group("mode")
    return GpuInfo(
        index=to_int(first.group("index")),
        name=known(first.group("name")),
        bus_id=normalize_bus_id(bus.group("bus")),
        persistence_mode=mode == "On" if mode in ("On", "Off") else None,
        driver_model=mode if mode in ("WDDM", "TCC", "MCDM") else None,
    )


def _read_gpu_row(gpu: GpuInfo, row: int, cells: list[str]) -> GpuInfo:
    """Rows 2 and 3 of a GPU block: memory and compute mode, then MIG mode (new in 450); ``gpu`` with them."""
    if row == 1:
        memory = _MIB_PAIR.search(cells[1])
        mode = _COMPUTE_MODE_IN_CELL.search(cells[2].strip())
        return replace(
            gpu,
            memory_used_mib=to_int(memory.group("used")) if memory else gpu.memory_used_mib,
            memory_total_mib=to_int(memory.group("total")) if memory else gpu.memory_total_mib,
            compute_mode=_COMPUTE_MODES.get(mode.group(1).lower()) if mode else gpu.compute_mode,
        )
    if row == 2:
        mig = known(cells[2])
        if mig in ("Enabled", "Disabled"):
            return replace(gpu, mig_mode_current=mig)
    return gpu


def _read_mig_row(cells: list[str]) -> MigDevice | None:
    """``| 0  2  0  0 | 26MiB / 40448MiB | ...``: GPU, GI, CI, MIG dev, then memory used/total."""
    first = _MIG_FIRST_CELL.fullmatch(cells[0].strip())
    if first is None:
        return None
    memory = _MIB_PAIR.search(cells[1])
    return MigDevice(
        gpu_index=to_int(first.group("gpu")),
        gpu_instance_id=to_int(first.group("gi")),  # "N/A" -> None
        compute_instance_id=to_int(first.group("ci")),
        mig_device_index=to_int(first.group("dev")),
        memory_total_mib=to_int(memory.group("total")) if memory else None,
    )


def _layout(lines: list[str]) -> str:
    # The <=470 table has a 31-character first column ("| GPU  Name        Persistence-M|");
    # later ones are wider.  Checks do not need this; it helps whoever reads a report.
    for line in lines:
        if line.startswith("|===") and "+" in line:
            return "table-legacy" if line.index("+") <= 32 else "table"
    return "table"


def parse_nvidia_smi_text(text: str) -> SmiReport:
    """Facts from the plain ``nvidia-smi`` output: its table, its error message, or both.

    ``attached_gpus`` stays ``None``: the table does not state it, and a lost GPU
    is missing from the table, so counting rows would claim more than we know.
    """
    try:
        return _parse_table(text)
    except Exception as exc:  # noqa: BLE001 # pragma: no cover - a parser bug must not become a crash of the doctor
        return SmiReport(error=SmiError("unparsable", f"internal parser error: {exc!r}"))


def _parse_table(text: str) -> SmiReport:
    if not isinstance(text, str):
        return SmiReport(error=SmiError("unparsable", "not text"))
    # stripping every line makes tab-indented pastes and stray margins harmless
    lines = [line.strip() for line in text.splitlines()]
    has_header, driver_version, cuda_version = _read_header(lines)

    section = "gpus"
    gpus: list[GpuInfo] = []
    in_block = False  # whether the rows now read belong to gpus[-1]
    row = 0
    mig_rows: list[MigDevice] = []
    err_buses: list[str] = []
    for line in lines:
        cells = _cells(line)
        if cells is None or line.startswith("|==="):
            in_block = False  # a rule (or anything not a row) ends a block
            continue
        if len(cells) == 1:
            title = cells[0].strip()
            if title.startswith("MIG devices"):
                section = "mig"
            elif title.startswith("Processes"):
                section = "processes"  # processes say nothing about the machine's set-up
            continue
        if section == "processes" or len(cells) < 3:
            continue
        gpu = _start_gpu(cells)
        if gpu is not None:
            section = "gpus"
            gpus.append(gpu)
            in_block, row = True, 0
        elif section == "mig":
            mig = _read_mig_row(cells)
            if mig is not None:
                mig_rows.append(mig)
            continue
        elif in_block:
            row += 1
            gpus[-1] = _read_gpu_row(gpus[-1], row, cells)
        bus_id = gpus[-1].bus_id if in_block else None
        if "ERR!" in line and bus_id and bus_id not in err_buses:
            err_buses.append(bus_id)

    # MIG rows name their GPU by index (the last GPU of that index, should two share one);
    # a row whose GPU is not in the table has no home
    position_of = {gpu.index: position for position, gpu in enumerate(gpus)}
    homed: dict[int, list[MigDevice]] = {}
    for mig in mig_rows:
        if mig.gpu_index in position_of:
            homed.setdefault(position_of[mig.gpu_index], []).append(mig)
    gpus = [
        replace(gpu, mig_devices=homed[position]) if position in homed else gpu for position, gpu in enumerate(gpus)
    ]

    schema = _layout(lines) if gpus or has_header else None
    error = classify_smi_error(text)
    if error is None and err_buses:
        error = SmiError("gpu_error_state", "the table shows ERR! for a GPU", ",".join(err_buses))
    if error is None and schema is None:
        first = next((line for line in lines if line), "")
        error = SmiError("unparsable", f"no nvidia-smi table or known error message: {first[:200]!r}")
    return SmiReport(
        driver_version=driver_version,
        cuda_version=cuda_version,
        gpus=gpus,
        error=error,
        schema=schema,
    )
