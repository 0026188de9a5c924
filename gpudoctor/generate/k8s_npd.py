"""node-problem-detector (NPD) running gpudoctor as a custom plugin: a node condition from the verdict.

The plugin protocol (kubernetes/node-problem-detector, pkg/custompluginmonitor/plugin/plugin.go): NPD runs
``path`` with ``args`` (no shell) every ``invoke_interval``, kills it at ``timeout``, trims its standard output
and cuts it at ``max_output_length`` bytes for the condition's message; exit 0 is OK, 1 NonOK, anything else
Unknown.  A "permanent" rule sets the node condition (and NPD records an Event when it changes); a "temporary"
rule only emits Events, and would run gpudoctor a second time per round, so there is none.  NPD refuses a config
whose rule ``path`` does not exist (types/config.go): ``/usr/bin/env`` exists in every image and finds
``gpudoctor`` on the image's PATH.

NPD needs to exec gpudoctor, so NPD runs in the gpudoctor image: an init container copies the binary out of the
official NPD image (statically linked since v0.8, so it runs on any Linux image) into an emptyDir.  Its RBAC is
that of Kubernetes' bootstrap role ``system:node-problem-detector`` (plugin/pkg/auth/authorizer/rbac/
bootstrappolicy/policy.go): get nodes, patch nodes/status, create/patch/update events.
"""

from __future__ import annotations

import json

from gpudoctor.generate.k8s_model import NPD_BINARY, NPD_GRACE_S, NPD_LEVEL, K8sRequest
from gpudoctor.generate.k8s_pod import (
    container_security,
    daemon_set,
    duration,
    gpu_env,
    gpu_pod_spec,
    metadata,
    tmp_mount,
    tmp_volume,
)
from gpudoctor.verdict import MAX_REASON_CHARS

NPD_NAME = "gpudoctor-node-problem-detector"
CONFIG_NAME = "gpudoctor-npd-config"
PLUGIN_FILE = "gpudoctor-plugin.json"
CONDITION = "GpudoctorProblem"
PLUGIN_PATH = "/usr/bin/env"
_BIN_DIR = "/npd"
# NPD cuts the message by bytes (Go's len); the verdict line is at most MAX_REASON_CHARS characters, each at most
# four bytes of UTF-8, so the whole line always fits and no character is ever cut in half.
MAX_OUTPUT_BYTES = 4 * MAX_REASON_CHARS


def plugin_command(request: K8sRequest) -> list[str]:
    """gpudoctor's words after ``/usr/bin/env``: the quick check, NPD's exit codes, the one-line verdict."""
    budget = duration(request.npd_budget_s).removesuffix("s")
    return ["gpudoctor", "check", "--level", NPD_LEVEL, "--budget", budget, "--exit-codes", "npd", "--format", "line"]


def plugin_config(request: K8sRequest) -> dict[str, object]:
    timeout = duration(request.npd_budget_s + NPD_GRACE_S)
    return {
        "plugin": "custom",
        "pluginConfig": {
            "invoke_interval": duration(request.interval_s),
            "timeout": timeout,
            "max_output_length": MAX_OUTPUT_BYTES,
            "concurrency": 1,
            # The reason in the message changes with the problem: a new problem updates the condition.
            "enable_message_change_based_condition_update": True,
        },
        "source": "gpudoctor-custom-plugin-monitor",
        "metricsReporting": True,
        "conditions": [
            {"type": CONDITION, "reason": "GpudoctorNoProblem", "message": "gpudoctor found no problem on this node"}
        ],
        "rules": [
            {
                "type": "permanent",
                "condition": CONDITION,
                "reason": "GpudoctorFoundProblem",
                "path": PLUGIN_PATH,
                "args": plugin_command(request),
                "timeout": timeout,
            }
        ],
    }


def cluster_role_name(namespace: str) -> str:
    return f"{namespace}-node-problem-detector"  # cluster-wide: one per namespace the manifests are made for


def rbac_objects(request: K8sRequest) -> list[dict[str, object]]:
    """The ServiceAccount NPD runs as, and the rights it needs, cluster-wide."""
    name = cluster_role_name(request.namespace)
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata(NPD_NAME, request.namespace)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": metadata(name, None),
            "rules": [
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
                {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
                {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": metadata(name, None),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": NPD_NAME, "namespace": request.namespace}],
        },
    ]


def config_map(request: K8sRequest) -> dict[str, object]:
    text = json.dumps(plugin_config(request), indent=2) + "\n"
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(CONFIG_NAME, request.namespace),
        "data": {PLUGIN_FILE: text},
    }


def npd_daemon_set(request: K8sRequest, image: str) -> dict[str, object]:
    binary = f"{_BIN_DIR}/node-problem-detector"
    bin_mount = {"name": "npd-bin", "mountPath": _BIN_DIR}
    copy = {
        "name": "copy-node-problem-detector",
        "image": request.npd_image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["cp", NPD_BINARY, binary],
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}},
        "securityContext": container_security(),
        "volumeMounts": [bin_mount],
    }
    npd = {
        "name": "node-problem-detector",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": [
            binary,
            "--logtostderr",
            f"--config.custom-plugin-monitor=/config/{PLUGIN_FILE}",
        ],
        "env": gpu_env(),
        # NPD's own numbers (its deployment/node-problem-detector.yaml: 10m, 80Mi) plus the quick check it starts.
        "resources": {"requests": {"cpu": "10m", "memory": "80Mi"}, "limits": {"cpu": "500m", "memory": "384Mi"}},
        "securityContext": container_security(),
        "volumeMounts": [bin_mount, {"name": "config", "mountPath": "/config", "readOnly": True}, tmp_mount()],
    }
    spec = gpu_pod_spec(request, service_account=NPD_NAME)
    spec["initContainers"] = [copy]
    spec["containers"] = [npd]
    spec["volumes"] = [
        {"name": "npd-bin", "emptyDir": {"sizeLimit": "128Mi"}},
        {"name": "config", "configMap": {"name": CONFIG_NAME}},
        tmp_volume(),
    ]
    return daemon_set(NPD_NAME, request.namespace, spec)
