"""All facts of one run, parsed once from the evidence, on first use.

Checks read ``facts.<name>``; each property parses its evidence the first time
it is asked for and keeps the result.  Where several sources say the same
thing (NVML, the XML query, the plain table), the merged views
(``gpus``, ``driver``) take the most precise one available and say which.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from gpudoctor.evidence.keys import EvidenceKey as Ev
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
from gpudoctor.facts.lspci import UNPLACED_LSPCI_BLOCK
from gpudoctor.facts.model import (
    DriverFacts,
    GpuInfo,
    KernelModule,
    LoaderCacheEntry,
    NvccInfo,
    OsRelease,
    PciDevice,
    SmiReport,
)
from gpudoctor.facts.sources_state import Missing, SourceRun, source_run
from gpudoctor.facts.text_facts import TextFacts
from gpudoctor.facts.vendor_facts import VendorFacts

if TYPE_CHECKING:
    from gpudoctor.facts.cuda_toolkit import CudaToolkit
    from gpudoctor.facts.cudnn import CudnnInstall
    from gpudoctor.facts.framework_model import CollectEnvReport, CupyFacts, JaxFacts, TensorflowFacts, TorchFacts
    from gpudoctor.facts.gpu_state import GpuState
    from gpudoctor.facts.health_model import GpuHealth
    from gpudoctor.facts.inventory import GpuCensus
    from gpudoctor.facts.kernel_log import KernelLog
    from gpudoctor.facts.kernel_module import LoadedModule
    from gpudoctor.facts.platform_model import DmiIdentity, PlatformFacts
    from gpudoctor.facts.python_env import NvmlBindings, TargetPythonFacts
    from gpudoctor.facts.smoke_model import SmokeFacts
    from gpudoctor.facts.topology_model import MachineTopology, NvLinkState, P2PMatrix, TopoMatrix


class Facts(TextFacts, VendorFacts):
    """The typed model of one machine, parsed from its evidence on first use.

    Checks read only these properties.  ``evidence`` stays reachable for the facts layer's own
    parsers and the report's provenance, never for checks.
    """

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence

    def collected(self, key: Ev) -> bool:
        """The source was part of this run or snapshot (it may still have failed: see :meth:`source`)."""
        return self.evidence.collected(key.value)

    def source(self, key: Ev) -> SourceRun:
        """How one source answered, or why it has nothing to say (not collected, failed, absent)."""
        return source_run(key.value, self.evidence.get(key.value))

    def missing(self, key: Ev) -> Missing | None:
        """Why ``key`` has no output, or None when it answered."""
        return self.source(key).missing

    @cached_property
    def source_runs(self) -> tuple[SourceRun, ...]:
        """Every source of this run or snapshot, as typed records, in collection order."""
        return tuple(source_run(name, item) for name, item in self.evidence.items.items())

    # --- nvidia-smi and NVML -------------------------------------------------
    @cached_property
    def smi_xml(self) -> SmiReport | None:
        item = self.evidence.get(Ev.NVIDIA_SMI_XML.value)
        if item is None or (item.error and not item.text):
            return None
        return nvidia_smi_xml.parse_nvidia_smi_xml(item.output)

    @cached_property
    def smi_text(self) -> SmiReport | None:
        item = self.evidence.get(Ev.NVIDIA_SMI.value)
        if item is None or (item.error and not item.output):
            return None
        return nvidia_smi_text.parse_nvidia_smi_text(item.output)

    @cached_property
    def smi_list(self) -> list[GpuInfo]:
        text = self.evidence.output(Ev.NVIDIA_SMI_LIST.value)
        if not text:
            # `nvidia-smi nvlink -s` heads each GPU's links with the same "GPU 0: <name> (UUID: ...)" line.
            text = self.evidence.output(Ev.NVIDIA_SMI_NVLINK.value)
        return nvidia_smi_text.parse_nvidia_smi_list(text) if text else []

    @cached_property
    def nvml(self) -> nvml.NvmlFacts:
        return nvml.parse_nvml_json(self.evidence.json(Ev.NVML.value))

    @cached_property
    def nvidia_smi_missing(self) -> bool:
        """nvidia-smi was looked for and is not installed."""
        item = self.evidence.get(Ev.NVIDIA_SMI.value)
        return bool(item and item.text is None and item.error and "not found" in item.error)

    # --- kernel side -----------------------------------------------------------
    @cached_property
    def kernel_module(self) -> KernelModule | None:
        text = self.evidence.text(Ev.PROC_DRIVER_VERSION.value)
        return kernel_module.parse_proc_driver_version(text) if text else None

    @cached_property
    def sys_module_version(self) -> str | None:
        text = self.evidence.text(Ev.SYS_MODULE_VERSION.value)
        return kernel_module.parse_sys_module_version(text) if text else None

    @cached_property
    def loaded_modules(self) -> dict[str, LoadedModule] | None:
        text = self.evidence.text(Ev.PROC_MODULES.value)
        return kernel_module.parse_proc_modules(text) if text is not None else None

    @cached_property
    def kernel_log(self) -> KernelLog:
        return kernel_log.parse_kernel_log(self.evidence.text(Ev.KERNEL_LOG.value) or "")

    @cached_property
    def kernel_log_readable(self) -> bool:
        item = self.evidence.get(Ev.KERNEL_LOG.value)
        return bool(item and item.text is not None and (item.exit_code in (0, None)))

    # --- PCI -----------------------------------------------------------------
    @cached_property
    def pci_devices(self) -> list[PciDevice]:
        """NVIDIA PCI functions: sysfs first (works without any driver), lspci to fill in."""
        # The scan also keeps other vendors' GPUs and TPUs (``pci_accelerators``); these are NVIDIA's functions.
        from_sysfs = [
            d
            for d in sysfs_pci.parse_pci_devices_json(self.evidence.json(Ev.PCI_DEVICES.value))
            if (d.vendor_id or "10de").lower() == "10de"
        ]
        text = self.evidence.text(Ev.LSPCI.value)
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
            by_address[device.address] = lspci.fill_from_lspci(known, device)
        return sorted(by_address.values(), key=lambda d: d.address)

    @cached_property
    def pci_scan_available(self) -> bool:
        """A scan of the whole bus answered: sysfs, or an lspci listing (a pasted LnkCap/LnkSta excerpt is not)."""
        return self._sysfs_scanned or lspci.lists_devices(self.evidence.text(Ev.LSPCI.value))

    @cached_property
    def pci_drivers_known(self) -> bool:
        """Which kernel driver owns each PCI function is known: sysfs was read, or lspci ran with ``-k``."""
        return self._sysfs_scanned or lspci.shows_drivers(self.evidence.text(Ev.LSPCI.value))

    @cached_property
    def _sysfs_scanned(self) -> bool:
        data = self.evidence.json(Ev.PCI_DEVICES.value)
        return isinstance(data, dict) and data.get("readable") is True

    @cached_property
    def pci_gpus(self) -> list[PciDevice]:
        return [d for d in self.pci_devices if d.is_gpu or d.class_code is None]

    @cached_property
    def platform(self) -> PlatformFacts:
        """Where this machine runs: the cloud instance and its type, the notebook platform, the container image."""
        from gpudoctor.facts.platform import platform_facts

        return platform_facts(self)

    @property
    def dmi(self) -> DmiIdentity:
        return self.platform.dmi

    @cached_property
    def nvcc(self) -> NvccInfo | None:
        """The nvcc first on PATH: ``nvcc --version``, else what a pasted collect_env report read from it (its
        "CUDA runtime version" is nvcc's version, "13.0.88")."""
        text = self.evidence.text(Ev.NVCC.value)
        if text:
            return nvcc.parse_nvcc_version(text)
        return nvcc.nvcc_from_version(self.collect_env.cuda_runtime) if self.collect_env is not None else None

    @cached_property
    def toolkits(self) -> list[CudaToolkit]:
        return cuda_toolkit.parse_cuda_toolkits(self.evidence.json(Ev.CUDA_TOOLKITS.value))

    @cached_property
    def toolkit_links(self) -> dict[str, str]:
        return cuda_toolkit.parse_toolkit_links(self.evidence.json(Ev.CUDA_TOOLKITS.value))

    @cached_property
    def loader_cache(self) -> list[LoaderCacheEntry]:
        text = self.evidence.text(Ev.LDCONFIG.value)
        return ldconfig.parse_ldconfig(text) if text else []

    @cached_property
    def cudnn(self) -> list[CudnnInstall]:
        installs = cudnn.parse_cudnn(self.evidence.json(Ev.CUDNN.value))
        if not installs:
            installs = cudnn.cudnn_from_ldconfig(self.loader_cache)
        return installs

    @cached_property
    def driver_libraries(self) -> dict[str, list[str]]:
        return driver_libraries.parse_driver_libraries(self.evidence.json(Ev.DRIVER_LIBRARIES.value))

    # --- the process's surroundings -------------------------------------------
    @cached_property
    def env(self) -> environment.EnvFacts:
        return environment.parse_env_json(self.evidence.json(Ev.ENV.value))

    @cached_property
    def device_nodes(self) -> device_nodes.DeviceNodeFacts:
        return device_nodes.parse_device_nodes(self.evidence.json(Ev.DEVICE_NODES.value))

    @cached_property
    def container(self) -> container.ContainerFacts:
        return container.parse_container(
            self.evidence.json(Ev.CONTAINER.value),
            self.evidence.text(Ev.PROC_VERSION.value),
            self.env.present,
            self.env.variables,
        )

    @cached_property
    def os_release(self) -> OsRelease | None:
        text = self.evidence.text(Ev.OS_RELEASE.value)
        return os_release.parse_os_release(text) if text else None

    @cached_property
    def uname(self) -> str | None:
        text = self.evidence.text(Ev.UNAME.value)
        return text.strip() or None if text else None

    @cached_property
    def nvml_bindings(self) -> NvmlBindings | None:
        """The NVML Python bindings installed beside gpudoctor; None when not collected."""
        from gpudoctor.facts.python_env import parse_nvml_bindings

        return parse_nvml_bindings(self.evidence.json(Ev.PYTHON_PACKAGES.value))

    # --- the frameworks of the target Python -------------------------------------
    @cached_property
    def collect_env(self) -> CollectEnvReport | None:
        """A pasted ``torch.utils.collect_env`` report, parsed; None when none was given."""
        from gpudoctor.facts.collect_env import parse_collect_env

        text = self.evidence.text(Ev.TORCH_COLLECT_ENV.value)
        return parse_collect_env(text) if text else None

    @cached_property
    def torch(self) -> TorchFacts:
        from gpudoctor.facts import framework_probe
        from gpudoctor.facts.collect_env import torch_facts_from_collect_env

        item = self.evidence.get(Ev.FRAMEWORK_TORCH.value)
        if item is None and self.collect_env is not None:
            return torch_facts_from_collect_env(self.collect_env)
        return framework_probe.parse_torch_probe(item)

    @cached_property
    def tensorflow(self) -> TensorflowFacts:
        from gpudoctor.facts import framework_probe
        from gpudoctor.facts.framework_model import ProbeRun, TensorflowFacts
        from gpudoctor.facts.tensorflow_log import parse_tensorflow_log

        item = self.evidence.get(Ev.FRAMEWORK_TENSORFLOW.value)
        log = self.evidence.text(Ev.TENSORFLOW_LOG.value)
        if item is None and log:
            return TensorflowFacts(source="log", run=ProbeRun(status="from_report"), log=parse_tensorflow_log(log))
        return framework_probe.parse_tensorflow_probe(item)

    @cached_property
    def jax(self) -> JaxFacts:
        from gpudoctor.facts import framework_probe

        return framework_probe.parse_jax_probe(self.evidence.get(Ev.FRAMEWORK_JAX.value))

    @cached_property
    def cupy(self) -> CupyFacts:
        from gpudoctor.facts import framework_probe

        return framework_probe.parse_cupy_probe(self.evidence.get(Ev.FRAMEWORK_CUPY.value))

    @cached_property
    def smoke(self) -> SmokeFacts:
        """The smoke workloads' measurements (``smoke.json``); status "not_collected" when none were run."""
        from gpudoctor.facts.smoke import parse_smoke

        return parse_smoke(self.evidence.get(Ev.SMOKE.value))

    @cached_property
    def target_python(self) -> TargetPythonFacts:
        """The probed interpreter: its path, why it was chosen, and what the probes learnt of it."""
        from gpudoctor.facts.python_env import target_python_facts

        probed = next(
            (fw.python for fw in (self.torch, self.tensorflow, self.jax, self.cupy) if fw.python is not None), None
        )
        return target_python_facts(self.evidence.json(Ev.TARGET_PYTHON.value), probed)

    @cached_property
    def gpu_states(self) -> list[GpuState]:
        """Clock-event reasons, power limits and processes per GPU (nvidia-smi XML, else the table)."""
        from gpudoctor.facts.gpu_state import gpu_states

        return gpu_states(self.evidence)

    @cached_property
    def topology(self) -> TopoMatrix | None:
        """The ``nvidia-smi topo -m`` matrix: links between GPU pairs and each GPU's NUMA node."""
        from gpudoctor.facts.nvidia_smi_topo import parse_topo_matrix

        return parse_topo_matrix(self.evidence.text(Ev.NVIDIA_SMI_TOPO.value))

    @cached_property
    def topology_p2p(self) -> P2PMatrix | None:
        """``nvidia-smi topo -p2p r``: which GPU pairs can read each other's memory directly."""
        from gpudoctor.facts.nvidia_smi_topo import parse_topo_p2p

        return parse_topo_p2p(self.evidence.text(Ev.NVIDIA_SMI_P2P.value))

    @cached_property
    def nvlink_status(self) -> dict[int, NvLinkState]:
        """``nvidia-smi nvlink -s``: each GPU's NVLinks, up or down."""
        from gpudoctor.facts.nvlink_status import parse_nvlink_status

        return parse_nvlink_status(self.evidence.text(Ev.NVIDIA_SMI_NVLINK.value))

    @cached_property
    def machine_topology(self) -> MachineTopology:
        """Every source's word on the wiring, merged: GPUs, PCIe links, NVLinks, pairs, NICs, NUMA, fabric."""
        from gpudoctor.facts.topology import build_topology

        return build_topology(self)

    @cached_property
    def gpu_health(self) -> list[GpuHealth]:
        """Each GPU's hardware health (ECC, retired pages, row remapping, InfoROM, clocks, lost GPUs)."""
        from gpudoctor.facts.gpu_health import gpu_health

        return gpu_health(self.evidence)

    # --- merged views ------------------------------------------------------------
    @cached_property
    def gpus(self) -> list[GpuInfo]:
        from gpudoctor.facts.inventory import merge_inventory

        return merge_inventory(self.nvml, self.smi_xml, self.smi_text, self.smi_list, self.collect_env)

    @cached_property
    def driver(self) -> DriverFacts:
        from gpudoctor.facts.inventory import DriverSources, merge_driver

        return merge_driver(
            DriverSources(
                nvml=self.nvml,
                smi_xml=self.smi_xml,
                smi_text=self.smi_text,
                kernel_module=self.kernel_module,
                sys_module_version=self.sys_module_version,
                loaded_modules=self.loaded_modules or {},
                pci_devices=self.pci_devices,
                driver_libraries=self.driver_libraries,
                collect_env=self.collect_env,
            )
        )

    @cached_property
    def gpu_census(self) -> GpuCensus:
        """How many NVIDIA GPUs any source shows, and whether "none" is established (only a PCI scan does that)."""
        from gpudoctor.facts.inventory import gpu_census

        return gpu_census(self)
