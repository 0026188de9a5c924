"""``gpudoctor fleet k8s -o DIR``: the Kubernetes manifests (DaemonSet, node-problem-detector plugin).

Without ``--image`` a Dockerfile for a small gpudoctor image is written too; where its gpudoctor comes from is
decided as for ``gpudoctor dockerfile`` (``commands/dockerfile``: a release installed from an index is taken from
PyPI, anything else as this gpudoctor's wheel, written into DIR beside the Dockerfile).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudoctor.generate.k8s_model import K8sRequest


def _request(args: argparse.Namespace, preflight: str) -> K8sRequest:
    from gpudoctor.generate.k8s_model import NPD_IMAGE, K8sRequest

    return K8sRequest(
        image=args.image,
        namespace=args.namespace,
        interval_s=args.interval,
        level=args.level,
        budget_s=args.time_budget,
        runtime_class=args.runtime_class,
        npd_image=args.npd_image or NPD_IMAGE,
        preflight=preflight,
    )


def _own_wheel() -> tuple[str, bytes]:
    """This gpudoctor's wheel (name, content), made the way ``gpudoctor dockerfile --preflight wheel`` makes it."""
    from gpudoctor.commands.dockerfile import write_own_wheel
    from gpudoctor.generate.dockerfile_preflight import wheel_name

    with tempfile.TemporaryDirectory(prefix="gpudoctor-k8s-") as scratch:
        path = os.path.join(scratch, wheel_name())
        write_own_wheel(path, force=False)
        with open(path, "rb") as handle:
            return wheel_name(), handle.read()


def run(args: argparse.Namespace) -> int:
    from gpudoctor.commands.dockerfile import preflight_mode
    from gpudoctor.evidence.safe_write import refuse_to_replace, write_directory
    from gpudoctor.generate.k8s_manifests import k8s_manifests

    preflight = "pypi" if args.image else preflight_mode(args.preflight, to_file=True)
    files: dict[str, str | bytes] = dict(
        k8s_manifests(_request(args, preflight))
    )  # bad values are refused before anything else
    refuse_to_replace(args.output, args.force, directory=True)  # before the wheel is built, not after
    if args.image is None and preflight == "wheel":
        name, content = _own_wheel()
        files[name] = content
    write_directory(args.output, files, force=args.force)
    for name in sorted(files):
        sys.stderr.write(f"wrote {os.path.join(args.output, name)}\n")
    return 0
