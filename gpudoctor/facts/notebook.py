"""Which hosted notebook platform this is (Colab, Kaggle, Paperspace Gradient, SageMaker Studio ...), from the
environment variables and marker files it sets (``kb.notebook_platforms``).  Tolerant: never raises."""

from __future__ import annotations

from gpudoctor.facts.environment import EnvFacts
from gpudoctor.facts.platform_model import NotebookPlatform


def identify_notebook(env: EnvFacts, exists: tuple[str, ...], files: dict[str, str]) -> NotebookPlatform | None:
    return None  # helper H4
