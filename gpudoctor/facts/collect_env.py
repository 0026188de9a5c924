"""A pasted ``python -m torch.utils.collect_env`` report, read into facts.

Two layouts exist: the classic one (``Key: value`` lines, a ``CPU:`` block and a
``Versions of relevant libraries:`` block) and the sectioned one vLLM's
``collect_env`` prints (``====`` section headers, ``Key   : value``).  Both are
read line by line: only the report's own keys are recognised, so a shell prompt,
"Collecting environment information..." or a warning pasted above the report is
simply passed over.  The one warning that *is* read is torch's "not compatible
with the current PyTorch installation", which says which GPU the wheel cannot
run on and which architectures it was built for.  ROCm builds add the HIP and
MIOpen lines and a gfx target after the GPU's name, XPU builds the "Is XPU
available" block with its "* ..." lines (see :mod:`collect_env_vendors`), and
of the CPU block only the model's name is kept.

``torch_facts_from_collect_env`` turns a report into the same :class:`TorchFacts`
the torch probe gives, claiming nothing the report does not show.
"""

from __future__ import annotations

import re

from gpudoctor.evidence import sniff
from gpudoctor.facts import collect_env_vendors as vendors
from gpudoctor.facts.collect_env_lines import KEYS, bool_of, clean_line, known_key, missing_of, value_of
from gpudoctor.facts.framework_model import (
    CollectEnvReport,
    InstallOrigin,
    ProbeRun,
    PythonTarget,
    TorchFacts,
)
from gpudoctor.facts.sources_state import Missing

_SECTION_RULE = re.compile(r"^\s*={10,}\s*$")
_PACKAGE_LINE = re.compile(r"^\s*\[(?P<tool>pip\d*|conda)\]\s+(?P<rest>\S.*?)\s*$")
_GPU_PREFIX = re.compile(r"^GPU\s+\d+\s*:\s*")
_UUID = re.compile(r"\s*\(UUID:[^)]*\)")
_PY_VERSION = re.compile(r"^(\d+\.\d+(?:\.\d+)?)")
# Sections of the sectioned layout whose lines are not the report's keys.
_SKIPPED_SECTIONS = {"cpu info", "vllm info", "environment variables"}
_CPU_SECTION = "cpu info"
# Values that go on over the lines below their key ("* ..." bullets for the Intel GPU lines).
_LIST_ATTRIBUTES = ("gpu_names", "cudnn", "intel_gpu_driver", "xpu_gpu_names", "xpu_detected")
_FLAG_ATTRIBUTES = ("debug_build", "cuda_available", "xpu_available")
_LIBRARY_SECTION = "versions of relevant libraries"

# --- torch's "GPU not supported by this build" warnings ------------------------------------------------------
# torch <= 2.12 (_check_cubins): "NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the
# current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 sm_60 ... sm_90."
_NOT_COMPATIBLE = re.compile(
    r"^(?:.*UserWarning:\s*)?(?P<name>\S.*?) with CUDA capability sm_(?P<cc>\d+) is not compatible with the "
    r"current PyTorch installation",
    re.MULTILINE,
)
_SUPPORTS = re.compile(r"supports CUDA capabilities\s+(?P<arches>[^\n]*)")
# torch 1.x-2.x (_check_capability): "Found GPU0 NAME which is of cuda capability 3.5." and newer torch:
# "Found GPU0 NAME which is of compute capability (CC) 6.1."
_FOUND_GPU = re.compile(
    r"Found GPU\d+ (?P<name>.+?) which is of (?:cuda|compute) capability (?:\(CC\) )?(?P<cc>\d+\.\d+)"
)
# The newest warning lists the code it was built for: "- 7.5 which supports hardware CC ..."
_BUILT_FOR = re.compile(r"^\s*- (?P<cc>\d+)\.(?P<minor>\d+) which supports hardware CC", re.MULTILINE)
_ARCH = re.compile(r"\b(?:sm|compute)_\d+[a-z]?\b")

_MACHINES = ("x86_64", "aarch64", "arm64", "ppc64le", "s390x", "amd64", "i686", "armv7l")
_MSC_MACHINE = re.compile(r"\[MSC v\.\d+ \d+ bit \((AMD64|ARM64)\)\]")
_OS_MACHINE = re.compile(r"\(([A-Za-z0-9_]+)\)\s*$")
# The path in torch's own warning: ".../envs/py312/lib/python3.12/site-packages/torch/cuda/__init__.py".
_SITE_PACKAGES_TORCH = re.compile(
    r"(?P<prefix>(?:/|[A-Za-z]:\\)[^\s:]*?)[/\\](?:lib[/\\]python\d+\.\d+[/\\]|Lib[/\\])"
    r"(?:site|dist)-packages[/\\]torch[/\\]"
)


def _capability_from_sm(digits: str) -> str | None:
    """ "120" -> "12.0", "86" -> "8.6" (the last digit is the minor version)."""
    if not digits.isdecimal() or len(digits) < 2:
        return None
    return f"{int(digits[:-1])}.{digits[-1]}"


def parse_unsupported_gpu_warning(text: object) -> tuple[str | None, str | None, list[str], bool]:
    """(GPU name, its capability "12.0", the architectures torch says it supports, whether it listed them).

    Read from torch's own warnings, wherever they sit in ``text``; all unknown when there is none.
    """
    if not isinstance(text, str):
        return None, None, [], False
    match = _NOT_COMPATIBLE.search(text)
    if match:
        arches: list[str] = []
        supports = _SUPPORTS.search(text, match.end())
        if supports:
            arches = _ARCH.findall(supports.group("arches"))
        return match.group("name").strip(), _capability_from_sm(match.group("cc")), arches, bool(arches)
    found = _FOUND_GPU.search(text)
    if found:
        built = [f"sm_{m.group('cc')}{m.group('minor')}" for m in _BUILT_FOR.finditer(text, found.end())]
        return found.group("name").strip(), found.group("cc"), built, bool(built)
    return None, None, [], False


def is_collect_env(text: object) -> bool:
    """Whether a lone pasted text is a collect_env report (classic or sectioned)."""
    # One recogniser: the evidence layer's, which decides what a lone pasted file is.
    return isinstance(text, str) and sniff.is_collect_env(text)


class _Draft:
    """The report's values while its lines are read; :meth:`report` makes the frozen :class:`CollectEnvReport`."""

    def __init__(self) -> None:
        self.texts: dict[str, str | None] = {}  # attribute -> value, for the plain text fields
        self.flags: dict[str, bool | None] = {}  # "debug_build", "cuda_available", "xpu_available"
        self.lists: dict[str, list[str]] = {attribute: [] for attribute in _LIST_ATTRIBUTES}
        self.cpu_name: str | None = None
        self.pip_packages: dict[str, str] = {}
        self.conda_packages: dict[str, str] = {}
        self.conda_channels: dict[str, str] = {}
        self.missing: dict[str, Missing] = {}
        self.msc_machine: str | None = None  # the Windows build tag of the Python version line

    def add_package(self, tool: str, rest: str) -> None:
        if tool.startswith("pip"):
            # "torch==2.2.2" (pip list --format=freeze); anything else ("Could not collect") is no package.
            name, sep, version = rest.partition("==")
            if sep and name.strip() and version.strip() and " " not in name.strip():
                self.pip_packages.setdefault(name.strip(), version.strip())
            return
        # conda list: "name version build [features] channel"; only three columns for the default channel.
        fields = [f for f in rest.split() if not (f.startswith("[") and f.endswith("]"))]
        if len(fields) < 2 or rest.lower().startswith(("could not collect", "no relevant packages")):
            return
        self.conda_packages.setdefault(fields[0], fields[1])
        if len(fields) >= 4:
            self.conda_channels.setdefault(fields[0], fields[3])

    def set(self, attribute: str, raw: str | None) -> None:
        if attribute == "gpu_names":
            value = value_of(raw)
            name = _UUID.sub("", _GPU_PREFIX.sub("", value)).strip() if value else ""
            if name:
                self.lists[attribute].append(name)
            return
        if attribute == "cudnn":
            value = value_of(raw)
            # "Probably one of the following:" announces a list of paths on the lines below.
            if value and not value.lower().startswith("probably one of"):
                self.lists[attribute].append(value)
            return
        if attribute in _LIST_ATTRIBUTES:  # the Intel GPU lines: "intel_opencl:\t24.39...", a GPU's name
            value = value_of(raw)
            if value:
                self.lists[attribute].append(" ".join(value.split()))
            return
        if attribute in _FLAG_ATTRIBUTES:
            self.flags[attribute] = bool_of(raw)
            return
        value = value_of(raw)
        if attribute == "python_version" and value is not None:
            # Windows: "3.10.13 | ... [MSC v.1916 64 bit (AMD64)]" names platform.machine() itself.
            msc = _MSC_MACHINE.search(value)
            if msc:
                self.msc_machine = msc.group(1)
            version = _PY_VERSION.match(value)
            value = version.group(1) if version else None
        self.texts[attribute] = value

    def note_missing(self, attribute: str, raw: str | None) -> None:
        """Record why a field the report has a line for holds no value ("Could not collect", "N/A", ...)."""
        missing = missing_of(raw)
        if missing is not None:
            self.missing[attribute] = missing
        else:
            self.missing.pop(attribute, None)

    def note_cpu_line(self, line: str, first: bool) -> None:
        """A line of the CPU block: the model's name is the first one that names it."""
        if self.cpu_name is None:
            self.cpu_name = vendors.cpu_model(line, first)

    def report(self, text: str, layout: str | None) -> CollectEnvReport:
        texts, lists = self.texts, self.lists
        gpu, cc, arches, _listed = parse_unsupported_gpu_warning(text)
        prefix = _SITE_PACKAGES_TORCH.search(text)
        return CollectEnvReport(
            torch_version=texts.get("torch_version"),
            debug_build=self.flags.get("debug_build"),
            cuda_build=texts.get("cuda_build"),
            rocm_build=texts.get("rocm_build"),
            os=texts.get("os"),
            gcc=texts.get("gcc"),
            libc=texts.get("libc"),
            python_version=texts.get("python_version"),
            python_platform=texts.get("python_platform"),
            cuda_available=self.flags.get("cuda_available"),
            cuda_runtime=texts.get("cuda_runtime"),
            cuda_module_loading=texts.get("cuda_module_loading"),
            gpu_names=lists["gpu_names"],
            driver_version=texts.get("driver_version"),
            cudnn=lists["cudnn"],
            pip_packages=self.pip_packages,
            conda_packages=self.conda_packages,
            conda_channels=self.conda_channels,
            unsupported_gpu=gpu,
            unsupported_capability=cc,
            supported_arches=arches,
            layout=layout,
            machine=_machine(texts.get("python_platform"), texts.get("os"), self.msc_machine),
            python_prefix=prefix.group("prefix") if prefix else None,
            hip_runtime=texts.get("hip_runtime"),
            miopen_runtime=texts.get("miopen_runtime"),
            xpu_available=self.flags.get("xpu_available"),
            xpu_build=texts.get("xpu_build"),
            xpu_gpu_names=lists["xpu_gpu_names"],
            intel_gpu_driver=lists["intel_gpu_driver"],
            cpu_name=self.cpu_name,
            gpu_gfx=vendors.gfx_targets(lists["gpu_names"]),
            xpu_devices=vendors.xpu_devices(lists["xpu_detected"]),
            missing=self.missing,
        )


def _machine(python_platform: str | None, os: str | None, msc_machine: str | None) -> str | None:
    # platform.platform(): "Linux-6.11.0-21-generic-x86_64-with-glibc2.40", "macOS-14.4-arm64-arm-64bit".
    for token in re.split(r"[-\s()]+", python_platform or ""):
        if token.lower() in _MACHINES:
            return token
    machine = _OS_MACHINE.search(os or "")  # "Ubuntu 24.10 (x86_64)", "macOS 14.4 (arm64)"
    if machine and machine.group(1).lower() in _MACHINES:
        return machine.group(1)
    return msc_machine  # the Windows build tag read from the Python version line, if any


def parse_collect_env(text: object) -> CollectEnvReport:
    """Parse a collect_env report; an empty :class:`CollectEnvReport` when ``text`` holds none.

    Lines are read as pasted (see :mod:`gpudoctor.facts.collect_env_lines`): quote markers, indentation, bullets,
    fences, ANSI codes and fullwidth colons are taken off, keys are matched in any case and without their colon,
    and a key whose value was wrapped onto the next line takes that line.
    """
    if not isinstance(text, str):
        return CollectEnvReport()
    draft = _Draft()
    seen: set[str] = set()
    continuation: str | None = None  # the attribute whose value goes on over the next lines (GPUs, cuDNN files)
    wrapped: str | None = None  # the attribute whose key ended its line: its value is on the next one
    skipping = False  # inside the CPU block or a section of no interest
    in_cpu = False  # inside the CPU block (classic) or the "CPU Info" section (sectioned): its model is read
    cpu_first = False  # the next non-blank line is the block's first
    raw_lines = text.splitlines()
    lines = [clean_line(line) for line in raw_lines]
    sectioned = False
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        # Sectioned layout: "=====" / title / "=====".
        if _SECTION_RULE.match(line) and index + 1 < len(lines) and _SECTION_RULE.match(lines[index + 1]):
            sectioned = True
            title = " ".join(lines[index].split()).lower()
            skipping = title in _SKIPPED_SECTIONS
            in_cpu = cpu_first = title == _CPU_SECTION
            continuation = wrapped = None
            index += 2
            continue
        package = _PACKAGE_LINE.match(line)
        if package:
            draft.add_package(package.group("tool"), package.group("rest"))
            continuation = wrapped = None
            continue
        if not line:
            continuation = wrapped = None
            # The classic CPU block ends at its blank line; a skipped section goes on to the next header.
            if skipping and not sectioned:
                skipping = in_cpu = False
            continue
        if skipping:
            if in_cpu:
                draft.note_cpu_line(line, cpu_first)
                cpu_first = False
            continue
        known = known_key(line)
        if known is None:
            if wrapped is not None:
                draft.set(wrapped, line)
                draft.note_missing(wrapped, line)
                wrapped = None
            elif continuation is not None:
                draft.set(continuation, line)
            continue
        key, raw = known
        continuation = wrapped = None
        if key == "cpu":
            if (raw or "").strip():
                draft.note_cpu_line((raw or "").strip(), True)  # "CPU: Apple M2 Pro", re-joined by hand
                continue
            # The classic "CPU:" block: lscpu, Win32_Processor or sysctl output; only the model's name is read.
            skipping = in_cpu = cpu_first = True
            continue
        attribute = KEYS.get(key)
        if attribute is None or attribute in seen:
            continue  # the first report in a paste wins
        seen.add(attribute)
        draft.set(attribute, raw)
        draft.note_missing(attribute, raw)
        if attribute in _LIST_ATTRIBUTES and (not value_of(raw) or attribute == "cudnn"):
            continuation = attribute
        elif not (raw or "").strip():
            wrapped = attribute
    # torch's warnings are read from the text as pasted, less the quote markers, colours and fences around it.
    plain = "\n".join(clean_line(line, bullets=False) for line in raw_lines)
    return draft.report(plain, ("sectioned" if sectioned else "classic") if seen else None)


# --- TorchFacts from a report -----------------------------------------------------------------------------------
_SYS_PLATFORMS = (("linux", "linux"), ("windows", "win32"), ("macos", "darwin"), ("darwin", "darwin"))


def _python_target(report: CollectEnvReport) -> PythonTarget | None:
    platform = (report.python_platform or "").lower()
    # platform.platform()'s first word, as sys.platform spells the same OS.
    sys_platform = next((name for word, name in _SYS_PLATFORMS if platform.startswith(word)), None)
    if all(v is None for v in (report.python_version, sys_platform, report.machine, report.python_prefix)):
        return None
    return PythonTarget(
        version=report.python_version,
        platform=sys_platform,
        machine=report.machine,
        prefix=report.python_prefix,
        mac_version=vendors.mac_version(report.python_platform),
        translated=vendors.translated(sys_platform, report.machine, report.cpu_name),
    )


def torch_index_hint(version: str | None) -> str | None:
    """ "download.pytorch.org/whl/cu126" for a "+cu126" / "+cpu" / "+rocm6.2" wheel: only that index builds them."""
    tag = version.split("+", 1)[1] if isinstance(version, str) and "+" in version else None
    if tag and re.fullmatch(r"cu\d+|cpu|rocm\d+(?:\.\d+)*", tag):
        return f"download.pytorch.org/whl/{tag}"
    return None


def _origin(report: CollectEnvReport) -> InstallOrigin:
    # Only a conda line for torch itself says how torch came: "packaged by Anaconda" in the Python line is
    # the interpreter's origin, and pip lists conda-installed packages too.
    for name in ("pytorch", "torch"):
        if name not in report.conda_packages:
            continue
        channel = report.conda_channels.get(name)
        if channel == "pypi":  # conda list shows pip-installed packages as "torch 2.1.0 pypi_0 pypi"
            return InstallOrigin(installer="pip", index_hint=torch_index_hint(report.torch_version))
        return InstallOrigin(
            installer="conda", conda_channel=channel, index_hint=f"conda:{channel}" if channel else "conda"
        )
    return InstallOrigin(index_hint=torch_index_hint(report.torch_version))


def torch_facts_from_collect_env(report: object) -> TorchFacts:
    """The :class:`TorchFacts` a report shows.

    The report's GPU list is nvidia-smi's, not torch's, so it does not become torch devices; its
    "Intel GPU models detected" lines are torch.xpu's own, so they become ``xpu_devices``.
    """
    if not isinstance(report, CollectEnvReport):
        return TorchFacts(source="collect_env", run=ProbeRun(status="from_report"))
    return TorchFacts(
        source="collect_env",
        run=ProbeRun(status="from_report"),
        version=report.torch_version,
        debug_build=report.debug_build,
        cuda=report.cuda_build,
        hip=report.rocm_build,
        is_available=report.cuda_available,
        python=_python_target(report),
        cuda_runtime_system=report.cuda_runtime,
        cudnn_system=list(report.cudnn),
        unsupported_gpu=report.unsupported_gpu,
        unsupported_capability=report.unsupported_capability,
        # Only the warning lists what the wheel was built for; without it the list is unknown, not empty.
        arch_list=list(report.supported_arches),
        arch_list_known=bool(report.supported_arches),
        nvidia_packages={
            name: version for name, version in report.pip_packages.items() if name.lower().startswith("nvidia-")
        },
        origin=_origin(report),
        rocm_runtime=report.hip_runtime,
        miopen=report.miopen_runtime,
        xpu_available=report.xpu_available,
        # The build's XPU line is printed only for an XPU build whose device is available.
        xpu_built=True if report.xpu_build or report.xpu_available else None,
        xpu_devices=list(report.xpu_devices),
    )
