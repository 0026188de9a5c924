"""Facts about where we run: bare metal, a container (Docker, Podman, Kubernetes) or WSL."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.facts.json_values import json_list


@dataclass(frozen=True)
class ContainerFacts:
    collected: bool = False
    in_container: bool = False
    runtime: str | None = None  # "docker", "podman", "kubernetes", "containerd", "lxc"
    wsl: bool = False
    wsl_version: int | None = None
    wsl_libcuda: bool = False  # /usr/lib/wsl/lib/libcuda.so.1 forwarded from the Windows driver


def parse_container(
    data: object, proc_version: str | None, env_present: tuple[str, ...] = (), env_vars: dict[str, str] | None = None
) -> ContainerFacts:
    """``container.json`` with ``/proc/version`` and the environment: the container runtime and WSL, if any."""
    env_vars = env_vars or {}
    runtime: str | None = None
    wsl_libcuda = False
    if isinstance(data, dict):
        raw_cgroup = data.get("cgroup")
        cgroup = raw_cgroup if isinstance(raw_cgroup, str) else ""
        if data.get("containerenv") is True or env_vars.get("container") == "podman":
            runtime = "podman"
        elif data.get("dockerenv") is True or "docker" in cgroup:
            runtime = "docker"
        elif "kubepods" in cgroup:
            runtime = "kubernetes"
        elif "containerd" in cgroup:
            runtime = "containerd"
        elif "lxc" in cgroup:
            runtime = "lxc"
        if "KUBERNETES_SERVICE_HOST" in env_present or data.get("kubernetes_serviceaccount") is True:
            runtime = "kubernetes"
        wsl_libcuda = "libcuda.so.1" in json_list(data.get("wsl_lib_files"))
    text = (proc_version or "").lower()
    wsl = "microsoft" in text
    return ContainerFacts(
        collected=isinstance(data, dict),
        in_container=runtime is not None,
        runtime=runtime,
        wsl=wsl,
        # WSL2 kernels say "microsoft-standard-WSL2"; WSL1 reports a fake "Microsoft" kernel.
        wsl_version=(2 if ("wsl2" in text or "microsoft-standard" in text) else 1) if wsl else None,
        wsl_libcuda=wsl_libcuda,
    )
