"""SMOKE checks: did real workloads prove acceleration, and did the hardware deliver what it is built for?

The measurements come from the smoke workloads (``gpudoctor smoke``, ``check --smoke``), run in the
target Python: matmul, a CNN training step, host/device/peer bandwidth and an all-reduce, on every
accelerator and on the CPU.  These checks judge them against the CPU measured in the same run, the
GPU's spec sheet (knowledge base) and the PCIe link the GPU is on (the machine's evidence).  Every
check is not applicable when no smoke run is in the evidence.

The checks live in one module per seam (acceleration, throughput, bandwidth, multi-GPU, with the causes and
fixes they print in ``_smoke_causes``); this module is the area's entry point, and the order of the
bindings below is the order the registry lists them in.
"""

from __future__ import annotations

from gpudoctor_checks import smoke_acceleration, smoke_bandwidth, smoke_multi_gpu, smoke_throughput

# The registry lists a module's checks in the order it binds them: SMOKE001 to SMOKE006.
acceleration_real = smoke_acceleration.acceleration_real
matmul_vs_spec = smoke_throughput.matmul_vs_spec
cnn_trains = smoke_throughput.cnn_trains
bandwidth_vs_link = smoke_bandwidth.bandwidth_vs_link
peer_to_peer = smoke_multi_gpu.peer_to_peer
allreduce_works = smoke_multi_gpu.allreduce_works
