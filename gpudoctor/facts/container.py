"""Facts about where we run: bare metal, a container (Docker, Podman, Kubernetes) or WSL."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.facts.json_values import json_list


@dataclass
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
    facts = ContainerFacts()
    env_vars = env_vars or {}
    if isinstance(data, dict):
        facts.collected = True
        raw_cgroup = data.get("cgroup")
        cgroup = raw_cgroup if isinstance(raw_cgroup, str) else ""
        if data.get("containerenv") is True or env_vars.get("container") == "podman":
            facts.runtime = "podman"
        elif data.get("dockerenv") is True or "docker" in cgroup:
            facts.runtime = "docker"
        elif "kubepods" in cgroup:
            facts.runtime = "kubernetes"
        elif "containerd" in cgroup:
            facts.runtime = "containerd"
        elif "lxc" in cgroup:
            facts.runtime = "lxc"
        if "KUBERNETES_SERVICE_HOST" in env_present or data.get("kubernetes_serviceaccount") is True:
            facts.runtime = "kubernetes"
        facts.in_container = facts.runtime is not None
        facts.wsl_libcuda = "libcuda.so.1" in json_list(data.get("wsl_lib_files"))
    text = (proc_version or "").lower()
    if "microsoft" in text:
        facts.wsl = True
        # WSL2 kernels say "microsoft-standard-WSL2"; WSL1 reports a fake "Microsoft" kernel.
        facts.wsl_version = 2 if ("wsl2" in text or "microsoft-standard" in text) else 1
    return facts
