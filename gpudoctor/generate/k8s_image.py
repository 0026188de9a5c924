"""The Dockerfile of a small gpudoctor image for the manifests, when ``fleet k8s`` is given no ``--image``.

The base is the Docker official ``python:X.Y-slim-bookworm`` of ``gpudoctor dockerfile --cpu`` (the driver, CUDA
and nvidia-smi come from the host through the NVIDIA container runtime, so the image needs none of them); where
gpudoctor comes from is ``gpudoctor dockerfile``'s ``--preflight`` choice: ``pypi`` (this release from the index)
or ``wheel`` (this gpudoctor's wheel, written beside the Dockerfile by the command).
"""

from __future__ import annotations

import string

from gpudoctor.generate.dockerfile_fields import load_template
from gpudoctor.generate.dockerfile_preflight import wheel_name
from gpudoctor.generate.dockerfile_python import CPU_DEFAULT_PYTHON

TEMPLATE = "Dockerfile.gpudoctor-node.tmpl"


def local_image_tag() -> str:
    """The tag the manifests name when the image is built from DIR/Dockerfile: this gpudoctor's version."""
    from gpudoctor import __version__

    return "gpudoctor-node:" + "".join(c if c.isalnum() or c in "._-" else "-" for c in __version__)


def node_dockerfile(preflight: str) -> str:
    from gpudoctor import __version__

    cache = "RUN --mount=type=cache,target=/root/.cache/pip \\"
    if preflight == "pypi":
        lines = [f"# gpudoctor {__version__} from PyPI.", cache, f"    pip install gpudoctor=={__version__}"]
    else:
        wheel = wheel_name()
        lines = [
            "# gpudoctor from its wheel, written beside this Dockerfile: keep the two in the build context.",
            f"COPY {wheel} /tmp/{wheel}",
            cache,
            f"    pip install /tmp/{wheel} \\",
            f"    && rm /tmp/{wheel}",
        ]
    header = "\n".join(
        [
            "# The gpudoctor image of the Kubernetes manifests beside this file (written by 'gpudoctor fleet k8s').",
            f"# Build: docker build -t {local_image_tag()} .   then push it to your registry and give the",
            "# manifests its name with 'gpudoctor fleet k8s --image REGISTRY/NAME:TAG' (or load it into each node).",
        ]
    )
    return string.Template(load_template(TEMPLATE)).substitute(
        header=header,
        base_image=f"python:{CPU_DEFAULT_PYTHON}-slim-bookworm",
        install_block="\n".join(lines) + "\n\n",
    )
