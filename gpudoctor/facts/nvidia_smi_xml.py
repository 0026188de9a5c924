"""Facts from ``nvidia-smi -q -x``.

The XML is nvidia-smi's most complete and most stable output, so it is the
preferred source where NVML itself cannot be queried.  Schemas v8 (2017) to v13
(595) are read the same way: by element names that have kept their meaning,
with every element optional.  Input is whatever a command or a person handed
over, so a shell prompt before the XML, junk after it, a cut-off file or an
error message instead of XML are all expected; the parser returns what it can
and never raises.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpudoctor.facts.model import GpuInfo, MigDevice, SmiError, SmiReport
from gpudoctor.facts.nvidia_smi_text import classify_smi_error, known, parse_int, parse_mib
from gpudoctor.facts.pci_address import normalize_bus_id

_ROOT_TAG = "<nvidia_smi_log"
_ROOT_END = "</nvidia_smi_log>"
_DTD = re.compile(r"nvsmi_device_(v[0-9]+)\.dtd")
_COMPUTE_CAP = re.compile(r"[0-9]+\.[0-9]+")


def parse_nvidia_smi_xml(text: str) -> SmiReport:
    """Facts from ``nvidia-smi -q -x`` output (any schema, possibly damaged)."""
    try:
        return _parse(text)
    except Exception as exc:  # noqa: BLE001 # pragma: no cover - a parser bug must not become a crash of the doctor
        return SmiReport(error=SmiError("unparsable", f"internal parser error: {exc!r}"))


def _parse(text: str) -> SmiReport:
    if not isinstance(text, str):
        return SmiReport(error=SmiError("unparsable", "not text"))
    start = text.find(_ROOT_TAG)
    if start < 0:
        # nvidia-smi -q -x prints its usual error text when NVML is down
        error = classify_smi_error(text) or SmiError("unparsable", "no <nvidia_smi_log> element in the output")
        return SmiReport(error=error)

    dtd = _DTD.search(text, 0, start)
    root, damage = log_root(text)
    if root is None:
        return SmiReport(error=SmiError("unparsable", f"XML could not be parsed: {damage}"))

    attached_gpus = parse_int(root.findtext("attached_gpus"))
    gpu_elements = root.findall("gpu")
    # -q -x lists GPUs in index order but names no index; the position is the
    # index only when every attached GPU is listed (not so under -i or trimming).
    complete = attached_gpus == len(gpu_elements)
    return SmiReport(
        driver_version=known(root.findtext("driver_version")),
        cuda_version=known(root.findtext("cuda_version")),  # absent in the oldest schemas (v8)
        attached_gpus=attached_gpus,
        gpus=[_gpu(element, position if complete else None) for position, element in enumerate(gpu_elements)],
        error=SmiError("truncated", f"XML ends early or is damaged: {damage}") if damage is not None else None,
        schema=dtd.group(1) if dtd else None,
    )


def log_root(text: str) -> tuple[ET.Element | None, str | None]:
    """The ``<nvidia_smi_log>`` element of the first document in ``text``, and the parse damage, if any.

    Parsing starts at the root element: that drops a prompt line, the XML declaration and the DOCTYPE.
    Without the DOCTYPE expat never sees an entity declaration, so a hostile snapshot cannot expand entities.
    """
    start = text.find(_ROOT_TAG)
    if start < 0:
        return None, "no <nvidia_smi_log> element"
    end = text.find(_ROOT_END, start)  # the first document only (-l loops print several)
    body = text[start : end + len(_ROOT_END)] if end > start else text[start:]
    # Text decoded with surrogateescape carries lone surrogates, which expat cannot encode.
    return _parse_tolerant(body.encode("utf-8", errors="replace").decode("utf-8"))


def _parse_tolerant(body: str) -> tuple[ET.Element | None, str | None]:
    """The root element and the parse error, if any.

    A pull parser builds the tree as it reads, so after an error the root
    still holds every element read before the damage: a cut-off capture keeps
    its driver version and its first GPUs.  Only text of elements that were
    closed, and hold no children, is kept: an element left open (or one a
    garbled end tag turned into the parent of what follows) may hold half a
    value, and half a version is worse than none.
    """
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    parser.feed(body)
    root: ET.Element | None = None
    closed: set[int] = set()
    damage = None
    try:
        # feed() queues a syntax error among the events; reading them raises it
        for queued in parser.read_events():
            # only "start"/"end" were asked for, which always come as (event, element)
            if len(queued) != 2 or not isinstance(queued[1], ET.Element):
                continue
            event, element = queued[0], queued[1]
            if root is None:
                root = element
            if event == "end":
                closed.add(id(element))
        parser.close()  # a document that simply stops is reported here
    except ET.ParseError as exc:
        damage = str(exc)
    if root is not None:
        for element in root.iter():
            if id(element) not in closed or len(element):
                element.text = None
    return root, damage


def _gpu(element: ET.Element, index: int | None) -> GpuInfo:
    link = element.find("pci/pci_gpu_link_info")
    # No schema up to v13 carries it, but if a later one does, it beats the knowledge base.
    capability = known(element.findtext("compute_cap"))
    if not (capability and _COMPUTE_CAP.fullmatch(capability)):
        capability = None
    return GpuInfo(
        index=index,
        name=known(element.findtext("product_name")),
        # the id attribute carries the same address; trimmed captures may lack <pci>
        bus_id=normalize_bus_id(element.findtext("pci/pci_bus_id")) or normalize_bus_id(element.get("id")),
        uuid=known(element.findtext("uuid")),
        serial=known(element.findtext("serial")),
        brand=known(element.findtext("product_brand")),
        architecture=known(element.findtext("product_architecture")),  # from schema v11
        memory_total_mib=parse_mib(element.findtext("fb_memory_usage/total")),
        memory_used_mib=parse_mib(element.findtext("fb_memory_usage/used")),
        compute_capability=capability,
        compute_capability_source="nvidia-smi" if capability else None,
        compute_mode=known(element.findtext("compute_mode")),
        persistence_mode=_enabled(element.findtext("persistence_mode")),
        mig_mode_current=known(element.findtext("mig_mode/current_mig")),
        mig_mode_pending=known(element.findtext("mig_mode/pending_mig")),
        # With MIG off the element holds the word "None" and no children.
        mig_devices=[
            MigDevice(
                gpu_index=index,
                gpu_instance_id=parse_int(mig.findtext("gpu_instance_id")),
                compute_instance_id=parse_int(mig.findtext("compute_instance_id")),
                mig_device_index=parse_int(mig.findtext("index")),
                uuid=known(mig.findtext("uuid")),
                memory_total_mib=parse_mib(mig.findtext("fb_memory_usage/total")),
            )
            for mig in element.findall("mig_devices/mig_device")
        ],
        driver_model=known(element.findtext("driver_model/current_dm")),
        pcie_gen_current=parse_int(link.findtext("pcie_gen/current_link_gen")) if link is not None else None,
        pcie_gen_max=parse_int(link.findtext("pcie_gen/max_link_gen")) if link is not None else None,
        pcie_width_current=parse_int(link.findtext("link_widths/current_link_width")) if link is not None else None,
        pcie_width_max=parse_int(link.findtext("link_widths/max_link_width")) if link is not None else None,
        minor_number=parse_int(element.findtext("minor_number")),
    )


def _enabled(value: str | None) -> bool | None:
    value = known(value)
    if value == "Enabled":
        return True
    if value == "Disabled":
        return False
    return None
