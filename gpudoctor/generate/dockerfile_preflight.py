"""Where the preflight gpudoctor of a generated Dockerfile comes from, and the lines that bring it in.

``pypi``: ``pip install gpudoctor==VERSION`` (the command picks it only for a release installed from an index);
``wheel``: the wheel ``gpudoctor dockerfile -o FILE`` writes next to FILE, COPY'd in and installed from the file;
``none``: no preflight, the framework's import as the default command, and a comment saying how to add it.
"""

from __future__ import annotations

import json

from gpudoctor.generate.model import Choice, DockerfileRequest, GenerationRefused

PREFLIGHT_MODES = ("pypi", "wheel", "none")
# gpudoctor's own Python floor (pyproject.toml's requires-python; a test keeps the two equal): an image whose
# Python is older cannot install the preflight.
GPUDOCTOR_MIN_PYTHON = (3, 9)
_FRAMEWORK_MODULE = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}


def wheel_name() -> str:
    """The file name of this gpudoctor's wheel (pure Python: py3-none-any), as the Dockerfile COPYs it."""
    from gpudoctor import __version__

    return f"gpudoctor-{__version__.replace('-', '_')}-py3-none-any.whl"


def _below_floor(python: str) -> bool:
    from gpudoctor.kb.python_versions import parse_python_version

    version = parse_python_version(python)
    return version is not None and version < GPUDOCTOR_MIN_PYTHON


def check_preflight_python(request: DockerfileRequest, python: str, whose: str) -> None:
    if request.preflight != "none" and _below_floor(python):
        floor = "%d.%d" % GPUDOCTOR_MIN_PYTHON
        raise GenerationRefused(
            f"gpudoctor needs Python {floor} or newer, and {whose} is {python}: the image cannot hold the preflight",
            "--preflight none",
        )


def source_choice(request: DockerfileRequest) -> Choice:
    from gpudoctor import __version__

    if request.preflight == "pypi":
        return Choice("gpudoctor", f"gpudoctor=={__version__} from PyPI", "this release is published there")
    if request.preflight == "wheel":
        return Choice(
            "gpudoctor",
            f"{wheel_name()} (COPY)",
            "the wheel 'gpudoctor dockerfile -o FILE' writes next to FILE: keep it in the build context",
        )
    return Choice(
        "gpudoctor", "none (--preflight none)", "no preflight in the image; a comment below says how to add it"
    )


def command_choice(request: DockerfileRequest, preflight: str, why: str) -> Choice:
    if request.preflight != "none":
        return Choice("default command", preflight, why)
    module = _FRAMEWORK_MODULE.get(request.framework, "sys")
    return Choice(
        "default command",
        f"python -c 'import {module}; print({module}.__version__)'",
        "no preflight: the command only shows that the framework imports",
    )


def preflight_block(request: DockerfileRequest, python: str) -> str:
    from gpudoctor import __version__

    cache = "RUN --mount=type=cache,target=/root/.cache/pip \\"
    wheel = wheel_name()
    if request.preflight == "pypi":
        lines = [
            f"# gpudoctor, whose check is the default command below: release {__version__} from PyPI.",
            cache,
            f"    pip install gpudoctor=={__version__}",
        ]
    elif request.preflight == "wheel":
        lines = [
            "# gpudoctor, whose check is the default command below, from the wheel 'gpudoctor dockerfile -o FILE'",
            "# wrote next to FILE: keep it in the build context.",
            f"COPY {wheel} /tmp/{wheel}",
            cache,
            f"    pip install /tmp/{wheel}",
        ]
    elif _below_floor(python):
        floor = "%d.%d" % GPUDOCTOR_MIN_PYTHON
        lines = [f"# No gpudoctor preflight: gpudoctor needs Python {floor} or newer, and this image's is {python}."]
    else:
        check = "--require-gpu " if not request.cpu else ""
        lines = [
            "# No gpudoctor preflight (--preflight none). To add one: write the wheel with",
            "#   gpudoctor dockerfile --preflight wheel -o Dockerfile   (or take a release from PyPI: --preflight pypi)",
            "# which adds these lines and makes the default command its check:",
            f"#   COPY {wheel} /tmp/{wheel}",
            f"#   RUN pip install /tmp/{wheel}",
            f'#   CMD ["gpudoctor", "check", {", ".join(json.dumps(w) for w in check.split())}'
            + (", " if check else "")
            + '"--format", "text"]',
        ]
    return "".join(line + "\n" for line in lines) + "\n"
