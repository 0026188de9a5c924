"""``--jupyter``: JupyterLab as the image's service, for the multi-framework generator (``dockerfile_multi``).

- JupyterLab lives in its own venv, /opt/jupyter, so its many dependencies (tornado, jupyter_server, ...) never
  move a framework's; each framework venv gets only ipykernel and is registered as a kernel ("PyTorch",
  "TensorFlow", "JAX") in /opt/jupyter's kernel path (``ipykernel install --prefix /opt/jupyter``).
- Both releases are pinned from the knowledge base (``kb.pip_pins.jupyter_pin``: the newest whose Requires-Python
  admits the image's Python, read from PyPI).
- It runs as the image's non-root user (uid 10001), on 0.0.0.0 inside the container (Docker's port mapping needs
  that) and port 8888; no token is baked in: JupyterLab makes one at start and prints the login URL (docker
  logs), or takes JUPYTER_TOKEN from ``docker run -e``.  The header says to publish on 127.0.0.1 only.
- The health check asks ``/api``, which answers without a login (jupyter_server's ``APIVersionHandler`` is
  ``@allow_unauthenticated``: "not authenticated, so give as few info as possible", base/handlers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.generate.model import Choice, GenerationRefused

JUPYTER_VENV = "/opt/jupyter"
PORT = 8888
KERNEL_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}


@dataclass(frozen=True)
class JupyterPlan:
    lab: str  # "jupyterlab==4.6.6"
    kernel: str  # "ipykernel==7.4.0"
    choice: Choice


def jupyter_plan(python: str, nearest: str) -> JupyterPlan:
    """The pinned JupyterLab and ipykernel for ``python``, or the refusal naming ``nearest``."""
    from gpudoctor.kb.pip_pins import jupyter_pin

    lab, kernel = jupyter_pin("jupyterlab", python), jupyter_pin("ipykernel", python)
    if lab is None or kernel is None:
        raise GenerationRefused(
            f"gpudoctor knows no JupyterLab and ipykernel release for Python {python} (kb pip_pins)", nearest
        )
    why = (
        f"the newest releases whose Requires-Python admits Python {python} ({lab.source}, {kernel.source}); "
        f"JupyterLab in its own venv {JUPYTER_VENV}, ipykernel in each framework venv, registered as its kernel"
    )
    return JupyterPlan(
        f"jupyterlab=={lab.version}",
        f"ipykernel=={kernel.version}",
        Choice("jupyter", f"jupyterlab=={lab.version}, ipykernel=={kernel.version}", why),
    )


def jupyter_block(plan: JupyterPlan, venvs: list[tuple[str, str, str]], constraints: dict[str, str]) -> str:
    """The RUN that installs JupyterLab and registers one kernel per ``(venv, kernel name, display name)``;
    ``constraints`` names the constraints file that holds a venv's pip to what is installed there (venv -> path)."""
    lines = [
        f"# JupyterLab in its own venv; ipykernel in each framework venv, registered as a kernel in {JUPYTER_VENV}'s",
        "# kernel path (the 'Python 3' kernel there is JupyterLab's own venv, without the frameworks).",
        "RUN --mount=type=cache,target=/root/.cache/pip \\",
        f"    {JUPYTER_VENV}/bin/pip install '{plan.lab}' \\",
    ]
    for venv, name, display in venvs:
        lines += [
            f"    && {_constraint(constraints, venv)}{venv}/bin/pip install '{plan.kernel}' \\",
            f"    && {venv}/bin/python -m ipykernel install --prefix {JUPYTER_VENV} --name {name} \\",
            f"        --display-name '{display}' \\",
        ]
    lines[-1] = lines[-1].removesuffix(" \\")
    return "".join(line + "\n" for line in lines) + "\n"


def _constraint(constraints: dict[str, str], venv: str) -> str:
    return f"PIP_CONSTRAINT={constraints[venv]} " if venv in constraints else ""


def jupyter_tail() -> str:
    """EXPOSE, HEALTHCHECK and the JupyterLab command (after USER and WORKDIR)."""
    probe = f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{PORT}/api', timeout=4)"
    lines = [
        f"EXPOSE {PORT}",
        "# JupyterLab's /api answers without a login: the health check needs no token.",
        "HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \\",
        f'    CMD ["{JUPYTER_VENV}/bin/python", "-c", "{probe}"]',
        "# No token in the image: JupyterLab makes one at start and prints the login URL (docker logs CONTAINER),",
        "# or takes JUPYTER_TOKEN from docker run -e. --ip=0.0.0.0 lets Docker's port mapping reach it; publish",
        f"# it on 127.0.0.1 only (-p 127.0.0.1:{PORT}:{PORT}). Never --allow-root: it runs as uid 10001.",
        f'CMD ["{JUPYTER_VENV}/bin/jupyter", "lab", "--ip=0.0.0.0", "--port={PORT}", "--no-browser"]',
    ]
    return "".join(line + "\n" for line in lines)


def jupyter_header(gpu: str) -> list[str]:
    """The header's run and token lines (``gpu``: " --gpus all" or "")."""
    return [
        "# Run JupyterLab, with a token you choose (no token is stored in the image):",
        "#   export JUPYTER_TOKEN=$(openssl rand -hex 24)",
        f"#   docker run --rm{gpu} -p 127.0.0.1:{PORT}:{PORT} -e JUPYTER_TOKEN my-image",
        f"#   then open http://127.0.0.1:{PORT}/lab?token=$JUPYTER_TOKEN",
        "# Without -e JUPYTER_TOKEN, JupyterLab makes a token at start: docker logs CONTAINER prints the login URL.",
        f"# 127.0.0.1 in -p keeps the port off the network (-p {PORT}:{PORT} publishes it on every interface, and",
        "# Docker's rules bypass most host firewalls).",
    ]
