"""``gpudoctor fleet slurm-config``: the slurm.conf lines, and the wrapper slurmd runs as Prolog and
HealthCheckProgram.

slurmd runs both hooks with an empty environment ("these programs do not have a search path set",
https://slurm.schedmd.com/prolog_epilog.html) and without arguments, so the wrapper carries everything:
a PATH, gpudoctor's full path, the level and the budget.  The same file serves both hooks: it drains the
node on a problem (a failing Prolog also fails the job's launch there) and resumes a drain of its own once
the node is healthy again.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys

from gpudoctor.errors import UsageError
from gpudoctor.fleet.slurm_healthcheck import HEALTHCHECK_BUDGET_S

DEFAULT_WRAPPER_PATH = "/etc/slurm/gpudoctor-healthcheck"
# What a login shell of root would have; scontrol is also looked for in the usual Slurm dirs by gpudoctor.
HOOK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The wrapper's path goes into slurm.conf values (which end at whitespace) and into a command printed for a
# person to run: an absolute path of plain characters only, so it can break neither.
_PLAIN_PATH = re.compile(r"^/[A-Za-z0-9._+/-]+$")


def gpudoctor_command(explicit: str | None) -> list[str]:
    """The gpudoctor to bake in: --gpudoctor, else this one's full path (its console script when run as
    one, else this Python with ``-m gpudoctor``)."""
    if explicit:
        return [explicit]
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "gpudoctor" and os.path.isfile(script):
        return [os.path.abspath(script)]
    return [os.path.abspath(sys.executable), "-m", "gpudoctor"]


def wrapper_script(args: argparse.Namespace) -> str:
    """The hook script: a PATH, SLURM_CONF when this one has it set, then exec of slurm-healthcheck."""
    budget = args.time_budget if args.time_budget is not None else HEALTHCHECK_BUDGET_S
    argv = [*gpudoctor_command(args.gpudoctor), "slurm-healthcheck", "--level", args.level, "--budget", f"{budget:g}"]
    if getattr(args, "fail_on", "problem") != "problem":
        argv += ["--fail-on", args.fail_on]
    if getattr(args, "unknown", "pass") != "pass":
        argv += ["--unknown", args.unknown]
    if getattr(args, "from_path", None):
        argv += ["--from", os.path.abspath(args.from_path)]
    conf = os.environ.get("SLURM_CONF")
    lines = [
        "#!/bin/sh",
        "# gpudoctor's Slurm node check, for Prolog and HealthCheckProgram (written by: gpudoctor fleet slurm-config).",
        "# slurmd runs it with an empty environment and no arguments; exit 0: the node may run jobs, 1: it may",
        "# not (it drained itself with a reason 'gpudoctor: ...', shown by sinfo -R). A drain gpudoctor set is",
        "# resumed once the node is healthy again; a node drained by anyone else is never touched.",
        f"PATH={HOOK_PATH}",
        "export PATH",
    ]
    if conf:
        lines += [
            "# The Slurm config the commands read (it was set where this was written).",
            f"SLURM_CONF={shlex.quote(conf)}",
            "export SLURM_CONF",
        ]
    lines.append("exec " + " ".join(shlex.quote(part) for part in argv))
    return "\n".join(lines) + "\n"


def slurm_conf_lines(args: argparse.Namespace, wrapper: str) -> str:
    budget = args.time_budget if args.time_budget is not None else HEALTHCHECK_BUDGET_S
    return f"""\
# slurm.conf lines for gpudoctor (on every node and the controller; then: scontrol reconfigure).
# Put the wrapper below at {wrapper} on every node (mode 0755, owned by root):
#   gpudoctor fleet slurm-config --wrapper-only > {wrapper} && chmod 0755 {wrapper}
#
# Periodic check of every node. slurmd kills a HealthCheckProgram after 60 s (slurm.conf(5)): the
# wrapper's budget is {budget:g} s. ANY: drained nodes are checked too, which is how a drain of ours is
# resumed once the node is fixed. CYCLE spreads the checks over the interval instead of all nodes at once.
HealthCheckProgram={wrapper}
HealthCheckInterval={args.interval}
HealthCheckNodeState=ANY,CYCLE
#
# Before a job's first step on each node: a node with a problem drains itself and fails the launch there,
# so the job is not started on a broken GPU. Runs on every job: keep --level quick.
Prolog={wrapper}
# Optional: run the Prolog on every allocated node at allocation time, not at the first step.
#PrologFlags=Alloc
# Optional: stop a Prolog that hangs (default: Slurm waits without end).
#PrologEpilogTimeout=120
"""


def slurm_config_text(args: argparse.Namespace) -> str:
    wrapper_path = getattr(args, "wrapper_path", None) or DEFAULT_WRAPPER_PATH
    if not _PLAIN_PATH.match(wrapper_path) or "/../" in wrapper_path + "/":
        raise UsageError(
            f"--wrapper-path {wrapper_path!r}: give an absolute path of letters, digits and . _ + - / "
            "(it is written into slurm.conf)"
        )
    script = wrapper_script(args)
    if getattr(args, "wrapper_only", False):
        return script
    shown = "\n".join(f"#   {line}" if line else "#" for line in script.splitlines())
    return f"{slurm_conf_lines(args, wrapper_path)}#\n# The wrapper ({wrapper_path}):\n{shown}\n"
