"""The ``gpudoctor-check`` DaemonSet: the check on every GPU node, every --interval, its JSON report in the log.

Each round runs ``gpudoctor check --format json`` once (the level's work is never doubled, which matters for the
smoke of ``--level full``) and then one status line with the node and the exit code, so ``kubectl logs`` gives
the reports ``gpudoctor fleet report`` reads and a line to grep.  The loop is a fixed shell text; every value
(interval, level, budget) reaches it as a positional argument, never inside the script.
"""

from __future__ import annotations

from gpudoctor.generate.k8s_model import K8sRequest
from gpudoctor.generate.k8s_pod import (
    container_security,
    daemon_set,
    duration,
    gpu_env,
    gpu_pod_spec,
    tmp_mount,
    tmp_volume,
)

CHECK_NAME = "gpudoctor-check"

# $1: seconds between rounds; the rest: gpudoctor check's options.  NPD's exit-code convention keeps "unknown"
# (2) apart from "problem" (1) in the status line.
CHECK_LOOP = (
    'interval="$1"; shift\n'
    "while :; do\n"
    '  gpudoctor check --format json --exit-codes npd "$@"\n'
    "  code=$?\n"
    '  echo "gpudoctor-check: node=${NODE_NAME:-?} exit=${code} (0 ok, 1 problem, 2 unknown); next in ${interval}"\n'
    '  sleep "${interval}"\n'
    "done\n"
)

# Memory for the level's work: quick reads files and runs nvidia-smi; standard imports the frameworks; full runs
# their smoke workloads (a CUDA context and a few GiB of tensors on the GPU, host memory for the framework).
_MEMORY_LIMIT = {"quick": "256Mi", "standard": "2Gi", "full": "8Gi"}


def check_args(request: K8sRequest) -> list[str]:
    return ["--level", request.level, "--budget", duration(request.check_budget_s).removesuffix("s")]


def check_daemon_set(request: K8sRequest, image: str) -> dict[str, object]:
    container: dict[str, object] = {
        "name": "check",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-c", CHECK_LOOP, CHECK_NAME, duration(request.interval_s), *check_args(request)],
        "env": gpu_env(),
        "resources": {
            "requests": {"cpu": "10m", "memory": "64Mi"},
            "limits": {"cpu": "1", "memory": _MEMORY_LIMIT[request.level]},
        },
        "securityContext": container_security(),
        "volumeMounts": [tmp_mount()],
    }
    spec = gpu_pod_spec(request, service_account=None)
    spec["containers"] = [container]
    spec["volumes"] = [tmp_volume()]
    return daemon_set(CHECK_NAME, request.namespace, spec)
