"""The README.md ``fleet k8s`` writes beside the manifests: how to apply them and what each file does."""

from __future__ import annotations

from gpudoctor.generate.k8s_check import CHECK_NAME
from gpudoctor.generate.k8s_model import K8sRequest
from gpudoctor.generate.k8s_npd import CONDITION, NPD_NAME, PLUGIN_FILE, cluster_role_name
from gpudoctor.generate.k8s_pod import GPU_NODE_LABEL, GPU_TAINT, duration

NAMESPACE_FILE = "00-namespace.yaml"
CHECK_FILE = "10-gpudoctor-check.yaml"
RBAC_FILE = "20-npd-rbac.yaml"
CONFIG_FILE = "21-npd-config.yaml"
NPD_FILE = "22-npd-daemonset.yaml"


def readme(request: K8sRequest, image: str, built_here: str | None) -> str:
    """``built_here``: the wheel's file name, "" for a PyPI install, None when --image named the image."""
    ns = request.namespace
    lines = ["# gpudoctor on Kubernetes", "", "Written by `gpudoctor fleet k8s`. Every value is quoted data.", ""]
    if built_here is not None:
        lines += [
            "## 1. The image",
            "",
            f"`Dockerfile` builds `{image}`: python slim and gpudoctor"
            + (f" (from `{built_here}`, beside it)" if built_here else " (from PyPI)")
            + ". The NVIDIA container runtime brings the driver and `nvidia-smi` from the host.",
            "",
            "```sh",
            f"docker build -t {image} .",
            "```",
            "",
            "Push it to a registry your nodes pull from, then write the manifests again with its name:",
            "`gpudoctor fleet k8s --image REGISTRY/gpudoctor-node:TAG -o DIR --force`. (On kind or minikube, load",
            "the local image into the nodes instead.)",
            "",
        ]
    lines += [
        "## Apply",
        "",
        "```sh",
        "kubectl apply -f .            # the YAML files, in name order: the namespace first",
        f"kubectl -n {ns} logs -l app.kubernetes.io/name={CHECK_NAME} --prefix      # the JSON reports",
        f"kubectl get nodes -o custom-columns='NODE:.metadata.name,GPUDOCTOR:.status.conditions[?(@.type==\"{CONDITION}\")].message'",
        "```",
        "",
        "## Files",
        "",
        f"- `{NAMESPACE_FILE}`: the namespace `{ns}`, held to the Pod Security Standards' `restricted` profile.",
        f"- `{CHECK_FILE}`: DaemonSet `{CHECK_NAME}` runs `gpudoctor check --level {request.level} --budget "
        f"{duration(request.check_budget_s).removesuffix('s')} --format json` every {duration(request.interval_s)} on each GPU node "
        "and prints the report, then a line `gpudoctor-check: node=N exit=C` (0 ok, 1 problem, 2 unknown), to its log.",
        f"- `{RBAC_FILE}`: ServiceAccount `{NPD_NAME}`, ClusterRole and ClusterRoleBinding "
        f"`{cluster_role_name(ns)}`: get nodes, patch nodes/status, create/patch/update events (what Kubernetes' "
        "own `system:node-problem-detector` role grants).",
        f"- `{CONFIG_FILE}`: ConfigMap with `{PLUGIN_FILE}`, node-problem-detector's custom plugin: every "
        f"{duration(request.interval_s)} it runs `gpudoctor check --level quick --exit-codes npd --format line` and "
        f"sets the node condition `{CONDITION}` (False: healthy; True: a problem, gpudoctor's one-line reason as "
        "the message; Unknown: gpudoctor could not judge).",
        f"- `{NPD_FILE}`: DaemonSet `{NPD_NAME}`: node-problem-detector, copied by an init container out of "
        f"`{request.npd_image}`, running inside the gpudoctor image so that it can start gpudoctor.",
        "",
        "## On which nodes, with which rights",
        "",
        f"Both DaemonSets run on nodes labelled `{GPU_NODE_LABEL}=true` (GPU Feature Discovery, part of the NVIDIA",
        f"GPU Operator, sets it) and tolerate the `{GPU_TAINT}` taint. "
        + (
            f"They use the RuntimeClass `{request.runtime_class}` (the GPU Operator's) "
            if request.runtime_class
            else "They use the cluster's default runtime (no RuntimeClass) "
        )
        + "and set `NVIDIA_VISIBLE_DEVICES=all` without requesting `nvidia.com/gpu`: they see every GPU and take",
        "none away from jobs. Where the NVIDIA Container Toolkit's",
        "`accept-nvidia-visible-devices-envvar-when-unprivileged` is off, they see no GPU and report it.",
        "They run as uid 10001 with a read-only root filesystem, no privilege escalation and no capabilities.",
        "",
        "Only the quick level is a node condition: it is cheap and runs no GPU work. Deeper levels belong in the",
        "check DaemonSet (`--level standard|full`), whose image then needs the frameworks (use your training image",
        "with gpudoctor installed as `--image`).",
        "",
    ]
    if request.level == "full":
        lines += [
            "`--level full` runs the smoke workloads on GPUs that jobs may be using at the same time (the pod takes",
            "no GPU from the scheduler): keep it for idle or cordoned nodes, or a maintenance window.",
            "",
        ]
    return "\n".join(lines)
