"""The typed model of where a machine runs: the cloud instance, the notebook platform, the container image.

Every value that is missing says why (``why_unknown``): the snapshot did not collect it, the source failed, or it
was looked for and is absent.  The knowledge that interprets these facts (what an instance type should have, how a
notebook platform gets a GPU, which driver an image was built for) lives in the knowledge base; the facts only say
what the machine itself states.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DmiIdentity:
    """``/sys/class/dmi/id``: a hypervisor, and on AWS Nitro the instance type, names itself here."""

    sys_vendor: str | None = None
    product_name: str | None = None
    product_version: str | None = None
    product_family: str | None = None
    board_vendor: str | None = None
    board_name: str | None = None
    bios_vendor: str | None = None
    bios_version: str | None = None
    chassis_vendor: str | None = None
    chassis_asset_tag: str | None = None

    @property
    def words(self) -> str:
        """'Amazon EC2 g5.xlarge': the vendor and product, for messages."""
        return " ".join(value for value in (self.sys_vendor, self.product_name) if value)


@dataclass(frozen=True)
class CloudInstance:
    """The cloud this machine is an instance of, and its instance type when something local or the metadata
    service says it."""

    provider: str  # "aws", "gcp", "azure", "oci", "alibaba", "lambda", "paperspace", ... (kb.cloud_instances keys)
    provider_name: str  # "AWS", "Google Cloud", "Azure", ...
    instance_type: str | None = None  # "g5.xlarge", "a2-highgpu-1g", "Standard_NC24ads_A100_v4"
    type_source: str | None = None  # where the type was read: "dmi", "cloud-init", "metadata"
    region: str | None = None
    zone: str | None = None
    # Why the type is unknown, when it is: "Google Compute Engine's DMI does not name the machine type; ...".
    why_unknown: str | None = None
    # What identified the provider, quoted: ('sys_vendor "Amazon EC2"', 'cloud-init cloud_name "aws"').
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class MetadataAnswer:
    """What ``--cloud-metadata`` got: asked or not, and how it went."""

    asked: bool = False
    provider: str | None = None
    ok: bool = False
    error: str | None = None  # "timed out after 0.5 s", "HTTP 401", "connection refused" ...
    instance_type: str | None = None
    region: str | None = None
    zone: str | None = None
    image: str | None = None  # the machine image the provider booted (AMI id, GCE image, Azure image reference)


@dataclass(frozen=True)
class NotebookPlatform:
    """A hosted notebook platform: the user has no root, and the GPU comes from the platform's own setting."""

    key: str  # "colab", "kaggle", "gradient", "sagemaker-studio", ... (kb.notebook_platforms keys)
    name: str  # "Google Colab"
    accelerator_requested: str | None = None  # what the platform's environment says was asked for ("GPU", "TPU")
    evidence: tuple[str, ...] = ()  # ('COLAB_RELEASE_TAG is set', '/kaggle exists')


@dataclass(frozen=True)
class ContainerImage:
    """The image a container runs, from its own environment and files."""

    kind: str  # "ngc", "nvidia-cuda", "rocm", "aws-dlc", "gcp-dlc", "azureml", "deepo", ... (kb keys)
    name: str  # "NGC PyTorch 24.01", "rocm/pytorch", "AWS Deep Learning Container"
    release: str | None = None  # NGC "24.01"
    frameworks: dict[str, str] = field(default_factory=dict)  # {"torch": "2.2.0a0+81ea7a4"}
    cuda_version: str | None = None  # "12.3.2" (CUDA_VERSION)
    built_for_driver: str | None = None  # "545.23.08" (CUDA_DRIVER_VERSION): the driver the image was built with
    require_cuda: str | None = None  # NVIDIA_REQUIRE_CUDA as the image sets it
    # Forward-compatibility libraries the image carries (/usr/local/cuda/compat): their driver version, or None.
    compat_driver: str | None = None
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContainerBanner:
    """An NGC container's start-up banner (its entrypoint prints it): which image, and its verdict on the driver."""

    product: str | None = None  # "PyTorch"
    release: str | None = None  # "23.10"
    built_for_driver: str | None = None  # "545.23" from "built for NVIDIA Driver Release 545.23 or later"
    detected_driver: str | None = None  # "525.85.12" from "but version 525.85.12 was detected"
    # "unavailable" (the error/warning), "enabled" (forward-compatibility mode is on), None: not said.
    compat_mode: str | None = None
    no_gpu: bool = False  # "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available."
    quoted: str | None = None  # the banner's verdict line, as written


@dataclass(frozen=True)
class PlatformFacts:
    """Where this machine runs.  ``collected`` is False for a snapshot without ``platform.json`` (then only the
    environment and pasted text can tell)."""

    collected: bool = False
    why_not_collected: str | None = None
    dmi: DmiIdentity = field(default_factory=DmiIdentity)
    cloud: CloudInstance | None = None
    metadata: MetadataAnswer = field(default_factory=MetadataAnswer)
    notebook: NotebookPlatform | None = None
    image: ContainerImage | None = None
    banner: ContainerBanner | None = None
