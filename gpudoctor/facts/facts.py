"""All facts of one run, parsed once from the evidence, on first use.

Checks read ``facts.<name>``; each property parses its evidence the first time
it is asked for and keeps the result.  Where several sources say the same
thing (NVML, the XML query, the plain table), the merged views
(``gpus``, ``driver``) take the most precise one available and say which.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from gpudoctor.evidence.model import Evidence
from gpudoctor.facts import (
    container,
    cuda_toolkit,
    cudnn,
    device_nodes,
    driver_libraries,
    environment,
    kernel_log,
    kernel_module,
    ldconfig,
    lspci,
    nvcc,
    nvidia_smi_text,
    nvidia_smi_xml,
    nvml,
    os_release,
    sysfs_pci,
)
from gpudoctor.facts.model import GpuInfo, PciDevice, SmiReport


@dataclass
class DriverFacts:
    """The NVIDIA driver as every source sees it."""

    kernel_module_loaded: bool = False
    kernel_version: str | None = None  # the loaded module
    kernel_flavor: str | None = None  # "proprietary" / "open" / "l4t"
    userspace_version: str | None = None  # NVML / nvidia-smi / libnvidia-ml file name
    userspace_source: str | None = None
    library_versions: list[str] = field(default_factory=list)  # libnvidia-ml.so.<version> files found
    cuda_max: str | None = None  # the highest CUDA the driver supports
    cuda_max_source: str | None = None
    nouveau_loaded: bool = False


# The address given to a pasted lspci block that names no device.
UNPLACED_LSPCI_BLOCK = "unknown"


class Facts:
    def __init__(self, evidence: Evidence):
        self.evidence = evidence

    def collected(self, name: str) -> bool:
        return self.evidence.collected(name)

    # --- nvidia-smi and NVML -------------------------------------------------
    @cached_property
    def smi_xml(self) -> SmiReport | None:
        item = self.evidence.get("nvidia-smi-q-x.xml")
        if item is None or (item.error and not item.text):
            return None
        return nvidia_smi_xml.parse_nvidia_smi_xml(item.output)

    @cached_property
    def smi_text(self) -> SmiReport | None:
        item = self.evidence.get("nvidia-smi.txt")
        if item is None or (item.error and not item.output):
            return None
        return nvidia_smi_text.parse_nvidia_smi_text(item.output)

    @cached_property
    def smi_list(self) -> list[GpuInfo]:
        text = self.evidence.output("nvidia-smi-L.txt")
        if not text:
            # `nvidia-smi nvlink -s` heads each GPU's links with the same "GPU 0: <name> (UUID: ...)" line.
            text = self.evidence.output("nvidia-smi-nvlink-s.txt")
        return nvidia_smi_text.parse_nvidia_smi_list(text) if text else []

    @cached_property
    def nvml(self) -> nvml.NvmlFacts:
        return nvml.parse_nvml_json(self.evidence.json("nvml.json"))

    @cached_property
    def nvidia_smi_missing(self) -> bool:
        """nvidia-smi was looked for and is not installed."""
        item = self.evidence.get("nvidia-smi.txt")
        return bool(item and item.text is None and item.error and "not found" in item.error)

    # --- kernel side -----------------------------------------------------------
    @cached_property
    def kernel_module(self) -> Any:
        text = self.evidence.text("proc-driver-nvidia-version.txt")
        return kernel_module.parse_proc_driver_version(text) if text else None

    @cached_property
    def sys_module_version(self) -> str | None:
        text = self.evidence.text("sys-module-nvidia-version.txt")
        return kernel_module.parse_sys_module_version(text) if text else None

    @cached_property
    def loaded_modules(self) -> dict[str, dict] | None:
        text = self.evidence.text("proc-modules.txt")
        return kernel_module.parse_proc_modules(text) if text is not None else None

    @cached_property
    def kernel_log(self) -> Any:
        return kernel_log.parse_kernel_log(self.evidence.text("dmesg-nvidia.txt") or "")

    @cached_property
    def kernel_log_readable(self) -> bool:
        item = self.evidence.get("dmesg-nvidia.txt")
        return bool(item and item.text is not None and (item.exit_code in (0, None)))

    # --- PCI -----------------------------------------------------------------
    @cached_property
    def pci_devices(self) -> list[PciDevice]:
        """NVIDIA PCI functions: sysfs first (works without any driver), lspci to fill in."""
        from_sysfs = sysfs_pci.parse_pci_devices_json(self.evidence.json("pci-devices.json"))
        text = self.evidence.text("lspci.txt")
        from_lspci = list(lspci.parse_lspci(text)) if text else []
        from_lspci = [
            d for d in from_lspci if (d.vendor_id or "").lower() == "10de" or "nvidia" in (d.description or "").lower()
        ]
        if text and not from_lspci and not from_sysfs:
            # A pasted `lspci -vv` excerpt without its device line still tells the link's state.
            fields = lspci.link_fields(text)
            if fields:
                from_lspci = [PciDevice(address=UNPLACED_LSPCI_BLOCK, **fields)]
        by_address = {d.address: d for d in from_sysfs}
        for device in from_lspci:
            known = by_address.get(device.address)
            if known is None:
                by_address[device.address] = device
                continue
            for name in (
                "description",
                "driver",
                "current_link_speed",
                "max_link_speed",
                "current_link_width",
                "max_link_width",
            ):
                if getattr(known, name) is None:
                    setattr(known, name, getattr(device, name))
        return sorted(by_address.values(), key=lambda d: d.address)

    @cached_property
    def pci_scan_available(self) -> bool:
        data = self.evidence.json("pci-devices.json")
        return (isinstance(data, dict) and data.get("readable") is True) or self.evidence.text("lspci.txt") is not None

    @cached_property
    def pci_gpus(self) -> list[PciDevice]:
        return [d for d in self.pci_devices if d.is_gpu or d.class_code is None]

    @cached_property
    def dmi(self) -> dict[str, Any]:
        data = self.evidence.json("pci-devices.json")
        dmi = data.get("dmi") if isinstance(data, dict) else None
        return dmi if isinstance(dmi, dict) else {}

    # --- CUDA, cuDNN, libraries ---------------------------------------------
    @cached_property
    def nvcc(self) -> Any:
        text = self.evidence.text("nvcc-version.txt")
        return nvcc.parse_nvcc_version(text) if text else None

    @cached_property
    def nvcc_on_path(self) -> bool:
        item = self.evidence.get("nvcc-version.txt")
        return bool(item and item.text)

    @cached_property
    def toolkits(self) -> list[Any]:
        return cuda_toolkit.parse_cuda_toolkits(self.evidence.json("cuda-toolkits.json"))

    @cached_property
    def toolkit_links(self) -> dict[str, str]:
        return cuda_toolkit.parse_toolkit_links(self.evidence.json("cuda-toolkits.json"))

    @cached_property
    def loader_cache(self) -> list[Any]:
        text = self.evidence.text("ldconfig-p.txt")
        return ldconfig.parse_ldconfig(text) if text else []

    @cached_property
    def cudnn(self) -> list[Any]:
        installs = cudnn.parse_cudnn(self.evidence.json("cudnn.json"))
        if not installs:
            installs = cudnn.cudnn_from_ldconfig(self.loader_cache)
        return installs

    @cached_property
    def driver_libraries(self) -> dict[str, Any]:
        return driver_libraries.parse_driver_libraries(self.evidence.json("driver-libraries.json"))

    # --- the process's surroundings -------------------------------------------
    @cached_property
    def env(self) -> environment.EnvFacts:
        return environment.parse_env_json(self.evidence.json("env.json"))

    @cached_property
    def device_nodes(self) -> device_nodes.DeviceNodeFacts:
        return device_nodes.parse_device_nodes(self.evidence.json("device-nodes.json"))

    @cached_property
    def container(self) -> container.ContainerFacts:
        return container.parse_container(
            self.evidence.json("container.json"),
            self.evidence.text("proc-version.txt"),
            self.env.present,
            self.env.variables,
        )

    @cached_property
    def os_release(self) -> Any:
        text = self.evidence.text("os-release")
        return os_release.parse_os_release(text) if text else None

    @cached_property
    def uname(self) -> str | None:
        text = self.evidence.text("uname.txt")
        return text.strip() or None if text else None

    @cached_property
    def python_packages(self) -> dict[str, Any] | None:
        data = self.evidence.json("python-packages.json")
        return data if isinstance(data, dict) else None

    # --- the frameworks of the target Python -------------------------------------
    @cached_property
    def collect_env(self) -> Any:
        """A pasted ``torch.utils.collect_env`` report, parsed; None when none was given."""
        from gpudoctor.facts.collect_env import parse_collect_env

        text = self.evidence.text("torch-collect-env.txt")
        return parse_collect_env(text) if text else None

    @cached_property
    def torch(self) -> Any:
        from gpudoctor.facts import framework_probe
        from gpudoctor.facts.collect_env import torch_facts_from_collect_env

        item = self.evidence.get("framework-torch.json")
        if item is None and self.collect_env is not None:
            return torch_facts_from_collect_env(self.collect_env)
        return framework_probe.parse_torch_probe(item)

    @cached_property
    def tensorflow(self) -> Any:
        from gpudoctor.facts import framework_probe
        from gpudoctor.facts.framework_model import ProbeRun, TensorflowFacts
        from gpudoctor.facts.tensorflow_log import parse_tensorflow_log

        item = self.evidence.get("framework-tensorflow.json")
        log = self.evidence.text("tensorflow-log.txt")
        if item is None and log:
            return TensorflowFacts(source="log", run=ProbeRun(status="from_report"), log=parse_tensorflow_log(log))
        return framework_probe.parse_tensorflow_probe(item)

    @cached_property
    def jax(self) -> Any:
        from gpudoctor.facts import framework_probe

        return framework_probe.parse_jax_probe(self.evidence.get("framework-jax.json"))

    @cached_property
    def cupy(self) -> Any:
        from gpudoctor.facts import framework_probe

        return framework_probe.parse_cupy_probe(self.evidence.get("framework-cupy.json"))

    @cached_property
    def smoke(self) -> Any:
        """The smoke workloads' measurements (``smoke.json``); status "not_collected" when none were run."""
        from gpudoctor.facts.smoke import parse_smoke

        return parse_smoke(self.evidence.get("smoke.json"))

    @cached_property
    def target_python(self) -> dict[str, Any]:
        """The probed interpreter: its path, why it was chosen, and what the probes learnt of it."""
        record = self.evidence.json("target-python.json")
        record = dict(record) if isinstance(record, dict) else {}
        for framework in (self.torch, self.tensorflow, self.jax, self.cupy):
            python = framework.python
            if python is not None:
                record.setdefault("executable", python.executable)
                record.setdefault("version", python.version)
                record.setdefault("platform", python.platform)
                record.setdefault("virtualenv", python.virtualenv)
                record.setdefault("conda_prefix", python.conda_prefix)
                break
        return {k: v for k, v in record.items() if isinstance(k, str)}

    @cached_property
    def gpu_states(self) -> list[Any]:
        """Clock-event reasons, power limits and processes per GPU (nvidia-smi XML, else the table)."""
        from gpudoctor.facts.gpu_state import gpu_states

        return gpu_states(self.evidence)

    @cached_property
    def topology(self) -> Any:
        """The ``nvidia-smi topo -m`` matrix: links between GPU pairs and each GPU's NUMA node."""
        from gpudoctor.facts.nvidia_smi_topo import parse_topo_matrix

        return parse_topo_matrix(self.evidence.text("nvidia-smi-topo-m.txt"))

    @cached_property
    def topology_p2p(self) -> Any:
        """``nvidia-smi topo -p2p r``: which GPU pairs can read each other's memory directly."""
        from gpudoctor.facts.nvidia_smi_topo import parse_topo_p2p

        return parse_topo_p2p(self.evidence.text("nvidia-smi-topo-p2p-r.txt"))

    @cached_property
    def nvlink_status(self) -> dict[int, Any]:
        """``nvidia-smi nvlink -s``: each GPU's NVLinks, up or down."""
        from gpudoctor.facts.nvlink_status import parse_nvlink_status

        return parse_nvlink_status(self.evidence.text("nvidia-smi-nvlink-s.txt"))

    @cached_property
    def machine_topology(self) -> Any:
        """Every source's word on the wiring, merged: GPUs, PCIe links, NVLinks, pairs, NICs, NUMA, fabric."""
        from gpudoctor.facts.topology import build_topology

        return build_topology(self)

    @cached_property
    def gpu_health(self) -> list[Any]:
        """Each GPU's hardware health (ECC, retired pages, row remapping, InfoROM, clocks, lost GPUs)."""
        from gpudoctor.facts.gpu_health import gpu_health

        return gpu_health(self.evidence)

    # --- merged views ------------------------------------------------------------
    @cached_property
    def gpus(self) -> list[GpuInfo]:
        from gpudoctor.facts.inventory import merge_inventory

        return merge_inventory(self)

    @cached_property
    def driver(self) -> DriverFacts:
        from gpudoctor.facts.inventory import merge_driver

        return merge_driver(self)
