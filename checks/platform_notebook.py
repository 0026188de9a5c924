"""Hosted notebook platforms: the GPU comes from the platform's own setting (PLAT010-PLAT019).

Which platform this is comes from the facts (``facts.platform.notebook``, read from the environment and marker
files); how that platform gives a runtime a GPU comes from the knowledge base (``gpudoctor.kb.notebook_platforms``).
PCI001 defers to PLAT010 on a notebook platform, and the runner turns any fix that needs root into the platform's
own way (``gpudoctor.runner_notebook``).
"""

from __future__ import annotations

from gpudoctor.api import CheckContext, Fix, check, not_applicable, ok, warning
from gpudoctor.evidence.keys import EvidenceKey as Ev
from gpudoctor.facts.facts import Facts
from gpudoctor.facts.platform_model import NotebookPlatform
from gpudoctor.results import Outcome
from gpudoctor.words import counted

_NOT_NOTEBOOK = "not a hosted notebook platform: nothing in the environment or on disk names one"


def platform_gpu_fix(notebook: NotebookPlatform) -> Fix | None:
    """The platform's own way to a GPU, as a fix with nothing to type (no root, no driver); None: kb has no row."""
    from gpudoctor.kb.notebook_platforms import notebook_platform

    info = notebook_platform(notebook.key)
    if info is None:
        return None
    return Fix(
        f"Give the {info.name} runtime a GPU with the platform's own setting (no driver to install, no root "
        f"needed): {info.get_gpu}.",
        needs_root=False,
        url=info.url,
    )


def _data(notebook: NotebookPlatform, visible: int) -> dict[str, object]:
    return {
        "platform": notebook.key,
        "platform_name": notebook.name,
        "accelerator_requested": notebook.accelerator_requested,
        "evidence": list(notebook.evidence),
        "accelerators_visible": visible,
    }


def _said(notebook: NotebookPlatform) -> str:
    """The marker that says what was asked for: identify_notebook puts it last."""
    return notebook.evidence[-1] if notebook.evidence else "its environment"


@check("PLAT010", area="platform", title="GPU runtime on a notebook platform")
def notebook_gpu_runtime(facts: Facts, ctx: CheckContext) -> Outcome:
    """What it checks: on a hosted notebook platform (Google Colab, Colab Enterprise, Kaggle, Paperspace
    Gradient, SageMaker Studio, Databricks, Lightning AI Studio, Vertex AI Workbench), recognised from the
    environment variables and files it sets, whether the runtime has a GPU or TPU at all, and what the platform's
    environment says was asked for (Colab's COLAB_GPU and COLAB_TPU_ADDR). Off such platforms it does not apply.

    Why it matters: a notebook platform gives a runtime its GPU from a setting of the notebook or of its machine;
    the user has no say over the driver or the kernel. A notebook without a GPU is fixed by that setting, never by
    installing a driver (which would fail, or break the platform's image).

    How to fix: use the platform's own setting: on Colab, Runtime → Change runtime type → Hardware accelerator:
    GPU → Save; on Kaggle, Settings → Accelerator → GPU (a phone-verified account); on Gradient, SageMaker
    Studio, Databricks, Lightning and Workbench, switch the notebook's machine (instance type, compute) to one with
    a GPU. `gpudoctor kb notebooks` lists each platform's steps and documentation.
    """
    notebook = facts.platform.notebook
    if notebook is None:
        return not_applicable(_NOT_NOTEBOOK)
    visible = max(len(facts.accelerators), len(facts.gpus))
    if visible:
        names = sorted({a.name for a in facts.accelerators if a.name} | {g.name for g in facts.gpus if g.name})
        listing = f" ({', '.join(names)})" if names else ""
        return ok(
            f"{notebook.name} runtime with {counted(visible, 'accelerator')} visible{listing}",
            data=_data(notebook, visible),
        )
    requested = notebook.accelerator_requested
    if requested in ("GPU", "TPU"):
        summary = (
            f"{notebook.name} says a {requested} runtime was asked for ({_said(notebook)}), yet no GPU or TPU is "
            "visible: the platform did not attach one (none free, or the quota is used up); reconnect, or check "
            "the setting"
        )
    elif requested == "none":
        summary = f"{notebook.name} runtime without a GPU: {_said(notebook)} says it is a CPU runtime"
    else:
        summary = f"No GPU or TPU on this {notebook.name} runtime ({_said(notebook)})"
    return warning(
        summary,
        fix=platform_gpu_fix(notebook),
        evidence=[Ev.ENV, Ev.PLATFORM],
        data=_data(notebook, 0),
        cause="" if requested == "TPU" else "no-nvidia-gpu",
    )
