"""Hosted notebook platforms (``data/notebook_platforms.json``, a source on every row): how each is recognised,
and how a user with no root gets a GPU there (the platform's own setting, never a driver install)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NotebookPlatformInfo:
    key: str  # "colab", "kaggle", "gradient", "sagemaker-studio", ...
    name: str  # "Google Colab"
    get_gpu: str  # "Runtime → Change runtime type → Hardware accelerator: a GPU (T4 on the free tier), Save"
    url: str  # the platform's documentation of that setting
    root: bool = False  # whether the user has root (can install packages system-wide / a driver): never a driver
    source: str = ""


def notebook_platform(key: str) -> NotebookPlatformInfo | None:
    raise NotImplementedError  # helper H4


def notebook_platforms() -> tuple[NotebookPlatformInfo, ...]:
    raise NotImplementedError  # helper H4
