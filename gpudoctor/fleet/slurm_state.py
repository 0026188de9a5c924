"""What Slurm says about its nodes, read tolerantly: ``scontrol show node -o NAME`` and ``sinfo -h -N``.

Both are text made for people, and their wording moves between Slurm releases (22.05 here; newer ones add
fields and states).  The parsers never raise: a line they cannot read gives no node, a state they do not
know is taken as able to run a job (Slurm itself refuses the job if it is not, and srun says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpudoctor.verdict import REASON_PREFIX

# sinfo's output format for `fleet run`: name, partition ("debug*": the default), state, reason.  The
# reason comes last because it is free text; a node name or partition never holds the separator.
SINFO_FIELDS = "%N|%P|%T|%E"
_SEPARATOR = "|"

# Slurm appends who set a reason and when: "maintenance [root@2026-11-26T04:37:23]".
_REASON_STAMP = re.compile(r"\s*\[[^\[\]]*@[^\[\]]*\]\s*$")
# `scontrol show node -o`: one line of Key=Value pairs; values may hold spaces (OS=Linux 6.1 #1 SMP ...).
_KEY = re.compile(r"(?:^|\s)([A-Z][A-Za-z_]*)=")
# Fields printed after Reason= by newer releases; Reason's free text ends where one of them starts.
_AFTER_REASON = re.compile(r"\s(?:Comment|Extra|ResumeAfterTime|InstanceId|InstanceType)=")

# Why a node cannot take a job, by the state words and flags of scontrol (IDLE+DRAIN+NOT_RESPONDING) and of
# sinfo's long states (drained, draining, down*, idle~).  First match wins: the order is what to tell first.
_BLOCKING_WORDS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"down"}), "down"),
    (frozenset({"drained", "drain", "drng"}), "drained"),
    (frozenset({"draining"}), "draining"),
    (frozenset({"fail", "failing"}), "failing"),
    (frozenset({"not_responding", "no_respond"}), "not responding"),
    (frozenset({"powered_down", "power_down", "powering_down", "powering_up", "power_up"}), "powered down"),
    (frozenset({"maint"}), "in a maintenance reservation"),
    (frozenset({"reboot_issued", "reboot"}), "rebooting"),
    (frozenset({"inval"}), "invalid in Slurm's configuration"),
    (frozenset({"future"}), "not in service yet"),
    (frozenset({"unknown", "unk"}), "in an unknown state"),
)
# sinfo's one-character state suffixes.
_SUFFIXES = {
    "*": "not_responding",
    "~": "powered_down",
    "#": "powering_up",
    "!": "powering_down",
    "%": "powering_down",
    "$": "maint",
    "^": "reboot_issued",
}
# Flags that mean someone (a person, a health check, Slurm) took the node out of service.
_OUT_OF_SERVICE = frozenset({"down", "drain", "drained", "draining", "drng", "fail", "failing"})


@dataclass(frozen=True)
class SlurmNode:
    name: str
    state: str  # as Slurm printed it: "IDLE+DRAIN", "drained", "down*"
    reason: str | None = None  # without Slurm's "[user@time]" stamp; None when there is none
    partition: str | None = None  # sinfo only: "debug*" is the default partition

    @property
    def words(self) -> frozenset[str]:
        return state_words(self.state)

    @property
    def out_of_service(self) -> bool:
        """Drained, draining, down or failing: someone took it out, and only they may put it back."""
        return bool(self.words & _OUT_OF_SERVICE)

    @property
    def drained_by_gpudoctor(self) -> bool:
        return self.out_of_service and (self.reason or "").startswith(REASON_PREFIX)

    def why_unavailable(self) -> str | None:
        """ "drained", "down", "not responding", ... when the node cannot run a job now; None when it can."""
        words = self.words
        for names, why in _BLOCKING_WORDS:
            if words & names:
                return why
        return None


def state_words(state: str) -> frozenset[str]:
    """The lower-case words of a state: "IDLE+DRAIN" -> {idle, drain}; "down*" -> {down, not_responding}."""
    words: set[str] = set()
    for part in state.lower().replace(" ", "+").split("+"):
        while part and part[-1] in _SUFFIXES:
            words.add(_SUFFIXES[part[-1]])
            part = part[:-1]
        part = part.rstrip("@-")  # "@": a reboot is pending, "-": planned; neither stops a job
        if part:
            words.add(part)
    return frozenset(words)


def clean_reason(text: str | None) -> str | None:
    """A reason without Slurm's "[user@time]" stamp; None for an empty one (sinfo prints "none")."""
    if text is None:
        return None
    reason = _REASON_STAMP.sub("", text).strip()
    return None if reason in ("", "none", "(null)") else reason


def parse_scontrol_node(text: str, name: str | None = None) -> SlurmNode | None:
    """The node described in ``scontrol show node -o`` output (the one called ``name`` if given)."""
    for line in text.splitlines():
        fields = scontrol_fields(line)
        node_name = fields.get("NodeName", "").split(" ")[0]
        if not node_name or (name is not None and node_name != name):
            continue
        return SlurmNode(node_name, fields.get("State", "").split(" ")[0], clean_reason(fields.get("Reason")))
    return None


def scontrol_fields(line: str) -> dict[str, str]:
    """``Key=Value`` pairs of one ``scontrol -o`` line; Reason keeps its free text to the line's end."""
    fields: dict[str, str] = {}
    reason_at = line.find(" Reason=")
    tail = None
    if reason_at >= 0:
        line, tail = line[:reason_at], line[reason_at + len(" Reason=") :]
        end = _AFTER_REASON.search(tail)
        if end:
            line += tail[end.start() :]
            tail = tail[: end.start()]
    keys = list(_KEY.finditer(line))
    for this, following in zip(keys, [*keys[1:], None]):
        value_end = following.start() if following else len(line)
        fields.setdefault(this.group(1), line[this.end() : value_end].strip())
    if tail is not None:
        fields["Reason"] = tail.strip()
    return fields


def parse_sinfo_nodes(text: str) -> list[SlurmNode]:
    """Nodes from ``sinfo -h -N -o '%N|%P|%T|%E'``, each once (sinfo repeats a node per partition)."""
    nodes: dict[str, SlurmNode] = {}
    for line in text.splitlines():
        parts = line.strip().split(_SEPARATOR, 3)
        if len(parts) != 4 or not parts[0] or " " in parts[0]:
            continue
        name, partition, state, reason = parts
        if name not in nodes:
            nodes[name] = SlurmNode(name, state.strip(), clean_reason(reason), partition.strip() or None)
    return list(nodes.values())


def parse_hostnames(text: str) -> list[str]:
    """``scontrol show hostnames LIST``: one name per line (blank lines and spaces dropped)."""
    return [line.strip() for line in text.splitlines() if line.strip() and " " not in line.strip()]
