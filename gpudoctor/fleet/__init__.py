"""Fleets: gpudoctor on every node of a cluster through the scheduler it already runs, and the fleet report.

Nothing here is an agent, an SSH loop or a job queue of our own: Slurm (``srun``, Prolog,
HealthCheckProgram), Ray (node-affinity tasks) and Kubernetes (a DaemonSet, a node-problem-detector
plugin) start the check on each node; ``fleet report`` aggregates the reports they return, or files
copied by hand.
"""
