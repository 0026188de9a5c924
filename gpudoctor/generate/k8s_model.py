"""What ``fleet k8s`` is asked for, and the time limits derived from it."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.verdict import DEFAULT_LEVEL_BUDGET_S

# The official node-problem-detector image: the tag its own deployment/node-problem-detector.yaml pins (kubernetes/
# node-problem-detector, unchanged from v0.8.21 to v1.36.0), and the statically linked binary (Makefile: "Disable
# cgo by default to make the binary statically linked") its Dockerfile puts at /node-problem-detector.
NPD_IMAGE = "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.19"
NPD_BINARY = "/node-problem-detector"

# Without --budget a check takes the level's usual limit, but at most this share of the interval, so that one
# round ends before the next begins (full at the default 300 s interval: 240 s).
INTERVAL_SHARE = 0.8
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
        if self.budget_s is not None:
            return self.budget_s
        return min(DEFAULT_LEVEL_BUDGET_S[self.level], INTERVAL_SHARE * self.interval_s)

    @property
    def npd_budget_s(self) -> float:
        """The plugin always runs the quick level: a node condition should be cheap and never use the GPUs."""
        quick = min(DEFAULT_LEVEL_BUDGET_S[NPD_LEVEL], INTERVAL_SHARE * self.interval_s)
        return min(self.budget_s, quick) if self.budget_s is not None else quick
