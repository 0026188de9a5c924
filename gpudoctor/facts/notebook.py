"""Which hosted notebook platform this is (Colab, Kaggle, Paperspace Gradient, SageMaker Studio ...), from the
environment variables and marker files it sets (``kb.notebook_platforms``).  Tolerant: never raises.

The evidence quoted back (``NotebookPlatform.evidence``) names only the marker and, for a value test, the value the
knowledge base expects: a recorded value itself never reaches a message from here.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpudoctor.facts.environment import EnvFacts
from gpudoctor.facts.platform_model import NotebookPlatform


def _value(env: EnvFacts, name: str) -> str | None:
    variables = env.variables if isinstance(env.variables, Mapping) else {}
    value = variables.get(name)
    return value if isinstance(value, str) else None


def _is_set(env: EnvFacts, name: str) -> bool:
    present = env.present if isinstance(env.present, (tuple, list)) else ()
    return _value(env, name) is not None or name in present


def _accelerator(env: EnvFacts, rules: tuple[object, ...]) -> tuple[str | None, str | None]:
    """(what was asked for, the evidence line) from the first rule that holds."""
    from gpudoctor.kb.notebook_platforms import AcceleratorRule

    for rule in rules:
        if not isinstance(rule, AcceleratorRule):
            continue
        value = _value(env, rule.env)
        if value is None:
            continue
        if rule.equals is None and value.strip():
            return rule.means, f"{rule.env} is set"
        if rule.equals is not None and value.strip() == rule.equals:
            return rule.means, f"{rule.env}={rule.equals}"
    return None, None


def identify_notebook(env: EnvFacts, exists: tuple[str, ...], files: dict[str, str]) -> NotebookPlatform | None:
    """The first platform of the knowledge base whose markers the environment or the disk shows; None: none."""
    from gpudoctor.kb.notebook_platforms import notebook_platforms

    if not isinstance(env, EnvFacts):
        env = EnvFacts()
    existing = {path for path in exists if isinstance(path, str)} if isinstance(exists, (tuple, list)) else set()
    if isinstance(files, Mapping):
        existing |= {path for path in files if isinstance(path, str)}
    for row in notebook_platforms():
        evidence = [f"{name} is set" for name in row.env_set if _is_set(env, name)]
        evidence += [f"{name}={value}" for name, value in row.env_equals if _value(env, name) == value]
        evidence += [f"{path} exists" for path in row.files if path in existing]
        if not evidence:
            continue
        requested, why = _accelerator(env, row.accelerator)
        if why and why not in evidence:
            evidence.append(why)
        return NotebookPlatform(key=row.key, name=row.name, accelerator_requested=requested, evidence=tuple(evidence))
    return None
