"""What ``fleet k8s`` is asked for, and the time limits derived from it."""

from __future__ import annotations

from dataclasses import dataclass

# The official node-problem-detector image: the tag its own deployment/node-problem-detector.yaml pins (kubernetes/
# node-problem-detector, unchanged from v0.8.21 to v1.36.0), and the statically linked binary (Makefile: "Disable
# cgo by default to make the binary statically linked") its Dockerfile puts at /node-problem-detector.
NPD_IMAGE = "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.19"
NPD_BINARY = "/node-problem-detector"

# A check's time limit when --budget is not given: each level's work with room to spare, below the default
# interval (300 s) so that one round ends before the next begins.
DEFAULT_BUDGET_S = {"quick": 60.0, "standard": 180.0, "full": 240.0}
# node-problem-detector kills a plugin at its timeout and reports "Unknown" with no reason of gpudoctor's:
# gpudoctor's own budget ends first, so its verdict (and reason) arrives.
NPD_GRACE_S = 30.0
NPD_LEVEL = "quick"


@dataclass(frozen=True)
class K8sRequest:
    image: str | None
    namespace: str
    interval_s: float
    level: str
    budget_s: float | None
    runtime_class: str = "nvidia"
    npd_image: str = NPD_IMAGE
    # Where the Dockerfile's gpudoctor comes from when no --image: "pypi" or "wheel" (written beside it).
    preflight: str = "pypi"

    @property
    def check_budget_s(self) -> float:
        return self.budget_s if self.budget_s is not None else DEFAULT_BUDGET_S[self.level]

    @property
    def npd_budget_s(self) -> float:
        """The plugin always runs the quick level: a node condition should be cheap and never use the GPUs."""
        quick = DEFAULT_BUDGET_S[NPD_LEVEL]
        return min(self.budget_s, quick) if self.budget_s is not None else quick
