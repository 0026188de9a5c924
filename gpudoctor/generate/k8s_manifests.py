"""Kubernetes manifests for fleets (``gpudoctor fleet k8s -o DIR``): a DaemonSet running the check on GPU nodes
and a node-problem-detector custom plugin, as YAML files (``k8s_yaml``), a README, and a Dockerfile for the
image when none is named."""

from __future__ import annotations

from gpudoctor.generate.k8s_check import check_daemon_set
from gpudoctor.generate.k8s_image import local_image_tag, node_dockerfile
from gpudoctor.generate.k8s_inputs import checked_image, checked_namespace, checked_runtime_class
from gpudoctor.generate.k8s_model import K8sRequest
from gpudoctor.generate.k8s_npd import config_map, npd_daemon_set, rbac_objects
from gpudoctor.generate.k8s_pod import metadata
from gpudoctor.generate.k8s_readme import CHECK_FILE, CONFIG_FILE, NAMESPACE_FILE, NPD_FILE, RBAC_FILE, readme
from gpudoctor.generate.k8s_yaml import to_yaml_stream

__all__ = ["K8sRequest", "k8s_manifests"]


def checked_request(request: K8sRequest) -> K8sRequest:
    """Every value a person gave, refused in one line (exit 2) when Kubernetes would refuse it."""
    checked_namespace(request.namespace)
    if request.image is not None:
        checked_image(request.image)
    checked_image(request.npd_image, "--npd-image")
    checked_runtime_class(request.runtime_class)
    return request


def _namespace(name: str) -> dict[str, object]:
    # The pods need nothing beyond "restricted" (kubernetes.io/docs/concepts/security/pod-security-admission).
    restricted = {"pod-security.kubernetes.io/enforce": "restricted"}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata(name, None, restricted)}


def k8s_manifests(request: K8sRequest) -> dict[str, str]:
    """File name -> text, for ``fleet k8s -o DIR``; a wheel the Dockerfile COPYs is the command's to add."""
    request = checked_request(request)
    image = request.image or local_image_tag()
    files = {
        NAMESPACE_FILE: to_yaml_stream([_namespace(request.namespace)]),
        CHECK_FILE: to_yaml_stream([check_daemon_set(request, image)]),
        RBAC_FILE: to_yaml_stream(rbac_objects(request)),
        CONFIG_FILE: to_yaml_stream([config_map(request)]),
        NPD_FILE: to_yaml_stream([npd_daemon_set(request, image)]),
    }
    built_here: str | None = None
    if request.image is None:
        from gpudoctor.generate.dockerfile_preflight import wheel_name

        files["Dockerfile"] = node_dockerfile(request.preflight)
        built_here = wheel_name() if request.preflight == "wheel" else ""
    files["README.md"] = readme(request, image, built_here)
    return files
