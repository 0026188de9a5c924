"""Hosted notebook platforms (``data/notebook_platforms.json``, a source on every row): how each is recognised,
and how a user with no root gets a GPU there (the platform's own setting, never a driver install).

Each row names the environment variables and files that identify the platform, as public code that detects it
tests them (Google's, Kaggle's, AWS's, Databricks' and Lightning's own libraries first), which of them say what
accelerator was asked for, and the platform's own way to a GPU.  The rows are tried in order: the first that
matches wins (Colab Enterprise before Colab, as Google's own detector orders them).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from gpudoctor.kb.loading import _load, as_dict, as_list

DATA_FILE = "notebook_platforms.json"


@dataclass(frozen=True)
class AcceleratorRule:
    """A recorded variable that says which accelerator the runtime was asked for: ``COLAB_GPU == "1"`` -> GPU."""

    env: str
    means: str  # "GPU", "TPU", "none" (a CPU runtime)
    equals: str | None = None  # None: any non-empty value


@dataclass(frozen=True)
class NotebookPlatformInfo:
    key: str  # "colab", "kaggle", "gradient", "sagemaker-studio", ...
    name: str  # "Google Colab"
    get_gpu: str  # "Runtime → Change runtime type → Hardware accelerator: a GPU (T4 on the free tier), Save"
    url: str  # the platform's documentation of that setting
    root: bool = False  # whether the user controls the GPU driver and kernel: a driver install can help
    source: str = ""  # URL of the public code that detects the platform
    env_set: tuple[str, ...] = ()  # any of these set (any value) identifies the platform
    env_equals: tuple[tuple[str, str], ...] = ()  # any of these (name, value) identifies it
    files: tuple[str, ...] = ()  # any of these paths existing identifies it
    env_values: tuple[str, ...] = ()  # variables read with their value
    env_presence: tuple[str, ...] = ()  # variables read by presence only
    accelerator: tuple[AcceleratorRule, ...] = ()
    custom_image: str | None = None  # where the platform lets the user bring an image of their own
    sources: tuple[str, ...] = ()  # keys of the file's sources block

    @property
    def value_markers(self) -> tuple[str, ...]:
        """Every variable this row reads the value of (it must be recorded with its value)."""
        names = [*self.env_values, *(name for name, _ in self.env_equals), *(rule.env for rule in self.accelerator)]
        names += [name for name in self.env_set if name not in self.env_presence]
        return tuple(dict.fromkeys(names))


def _strings(value: object) -> tuple[str, ...]:
    return tuple(item for item in as_list(value) if isinstance(item, str) and item)


def _rules(value: object) -> tuple[AcceleratorRule, ...]:
    rules = []
    for raw in as_list(value):
        row = as_dict(raw)
        env, means, equals = row.get("env"), row.get("means"), row.get("equals")
        if not isinstance(env, str) or not isinstance(means, str):
            continue
        if isinstance(equals, str):
            rules.append(AcceleratorRule(env, means, equals))
        elif row.get("nonempty") is True:
            rules.append(AcceleratorRule(env, means))
    return tuple(rules)


def _platform(raw: object) -> NotebookPlatformInfo | None:
    row = as_dict(raw)
    fields = [row.get(key) for key in ("key", "name", "get_gpu", "url", "source")]
    if not all(isinstance(value, str) and value for value in fields):
        return None
    identify = as_dict(row.get("identify"))
    equals = tuple(
        (name, value) for name, value in as_dict(identify.get("env_equals")).items() if isinstance(value, str)
    )
    custom = row.get("custom_image")
    return NotebookPlatformInfo(
        key=str(fields[0]),
        name=str(fields[1]),
        get_gpu=str(fields[2]),
        url=str(fields[3]),
        root=row.get("root") is True,
        source=str(fields[4]),
        env_set=_strings(identify.get("env_set")),
        env_equals=equals,
        files=_strings(identify.get("files")),
        env_values=_strings(row.get("env_values")),
        env_presence=_strings(row.get("env_presence")),
        accelerator=_rules(row.get("accelerator")),
        custom_image=custom if isinstance(custom, str) and custom else None,
        sources=_strings(row.get("sources")),
    )


@functools.lru_cache(maxsize=1)
def notebook_platforms() -> tuple[NotebookPlatformInfo, ...]:
    """Every platform, in the order they are tried; rows that do not parse are skipped."""
    rows = (_platform(raw) for raw in as_list(_load(DATA_FILE).get("platforms")))
    return tuple(row for row in rows if row is not None)


def notebook_platform(key: str) -> NotebookPlatformInfo | None:
    return next((row for row in notebook_platforms() if row.key == key), None)


def markers() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(variables read by value, variables read by presence, paths) over every row: what evidence must record."""
    values = {name for row in notebook_platforms() for name in row.value_markers}
    presence = {name for row in notebook_platforms() for name in row.env_presence}
    files = {path for row in notebook_platforms() for path in row.files}
    return tuple(sorted(values)), tuple(sorted(presence)), tuple(sorted(files))


def sources() -> dict[str, dict[str, str]]:
    """The file's sources: key -> {"title", "url"}."""
    found: dict[str, dict[str, str]] = {}
    for key, value in as_dict(_load(DATA_FILE).get("sources")).items():
        entry = as_dict(value)
        found[str(key)] = {k: str(v) for k, v in entry.items() if k in ("title", "url") and isinstance(v, str)}
    return found


def as_of() -> str:
    return str(_load(DATA_FILE).get("as_of") or "unknown")
