"""What every gpudoctor pod on a GPU node shares: where it runs, how it sees the GPUs, how little it may do.

Where, and how it sees the GPUs, follows NVIDIA's own node DaemonSets (the GPU Operator's operator-validator and
dcgm-exporter, github.com/NVIDIA/gpu-operator assets/state-*/ *_daemonset.yaml): nodes that GPU Feature Discovery
labelled ``nvidia.com/gpu.present=true``, a toleration for the ``nvidia.com/gpu`` taint GPU pools carry, and the
``nvidia`` RuntimeClass the GPU Operator creates.  ``NVIDIA_VISIBLE_DEVICES=all`` (with no ``nvidia.com/gpu``
request) has the NVIDIA container runtime mount every GPU into the pod without the scheduler giving one away, so
jobs keep all of them; the toolkit honours the variable for unprivileged pods unless
``accept-nvidia-visible-devices-envvar-when-unprivileged`` was turned off (the README in DIR says so).

Least privilege fits the Pod Security Standards' "restricted" profile (kubernetes.io/docs/concepts/security/
pod-security-standards): non-root, no privilege escalation, every capability dropped, RuntimeDefault seccomp, a
read-only root filesystem with an emptyDir for /tmp.  Reading the GPUs needs none of these: /dev/nvidia* are
world-readable device nodes the runtime adds.
"""

from __future__ import annotations

from gpudoctor.generate.k8s_model import K8sRequest

GPU_NODE_LABEL = "nvidia.com/gpu.present"
GPU_TAINT = "nvidia.com/gpu"
POD_USER = 10001  # the image's own non-root user (Dockerfile.gpudoctor-node.tmpl); any image works with it
PART_OF = "gpudoctor"


def labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": PART_OF}


def metadata(name: str, namespace: str | None, extra_labels: dict[str, str] | None = None) -> dict[str, object]:
    meta: dict[str, object] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {**labels(name), **(extra_labels or {})}
    return meta


def gpu_env() -> list[dict[str, object]]:
    return [
        {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
        # utility: nvidia-smi and NVML; compute: the CUDA driver, for the framework probes and smoke of the
        # standard and full levels.
        {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "HOME", "value": "/tmp"},  # the root filesystem is read-only; /tmp is the pod's emptyDir
    ]


def container_security() -> dict[str, object]:
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }


def tmp_volume() -> dict[str, object]:
    return {"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}}


def tmp_mount() -> dict[str, object]:
    return {"name": "tmp", "mountPath": "/tmp"}


def gpu_pod_spec(request: K8sRequest, service_account: str | None) -> dict[str, object]:
    """The pod spec's common part; the caller adds containers, init containers and volumes."""
    spec: dict[str, object] = {}
    if request.runtime_class:
        spec["runtimeClassName"] = request.runtime_class
    if service_account:
        spec["serviceAccountName"] = service_account
    spec["automountServiceAccountToken"] = service_account is not None
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": GPU_NODE_LABEL, "operator": "In", "values": ["true"]}]}
                ]
            }
        }
    }
    spec["tolerations"] = [{"key": GPU_TAINT, "operator": "Exists", "effect": "NoSchedule"}]
    spec["securityContext"] = {
        "runAsNonRoot": True,
        "runAsUser": POD_USER,
        "runAsGroup": POD_USER,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    spec["terminationGracePeriodSeconds"] = 10
    return spec


def daemon_set(name: str, namespace: str, pod_spec: dict[str, object]) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": metadata(name, namespace),
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
            "template": {"metadata": {"labels": labels(name)}, "spec": pod_spec},
        },
    }


def duration(seconds: float) -> str:
    """Seconds as a Go duration (NPD's config) or sleep(1) argument: "300s", "2.5s"."""
    whole = int(seconds)
    return f"{whole}s" if whole == seconds else f"{seconds:.3f}".rstrip("0") + "s"
