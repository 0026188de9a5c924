"""``gpudoctor install-script``: a bash script that installs the driver, CUDA, cuDNN, the container
toolkit and a framework venv for this distro.

On a hosted notebook platform (Colab, Kaggle, SageMaker Studio ...) it writes nothing: the user has no root there,
and the GPU comes from the platform's own setting, which the refusal names.  A script for another machine is
written from that machine's snapshot (``--from``), which a notebook can read.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from gpudoctor.commands.common import guarded, refuse_existing
from gpudoctor.commands.generated import emit_generated, generator_target, generator_vendor


def live_notebook_refusal(environ: Mapping[str, str] | None = None) -> str | None:
    """The one-line refusal when this machine is a hosted notebook platform, else None.  Reads only the
    environment and a few marker paths (no commands): it runs before anything is collected."""
    from gpudoctor.evidence import markers_notebook
    from gpudoctor.evidence.system_scan import scan_environment
    from gpudoctor.facts.environment import parse_env_json
    from gpudoctor.facts.notebook import identify_notebook
    from gpudoctor.kb.notebook_platforms import notebook_platform

    env = parse_env_json(scan_environment(os.environ if environ is None else environ))
    exists = tuple(path for path in markers_notebook.FILES_EXIST if os.path.exists(path))
    notebook = identify_notebook(env, exists, {})
    if notebook is None:
        return None
    info = notebook_platform(notebook.key)
    if info is not None and info.root:
        return None
    steps = f" {info.get_gpu} ({info.url})." if info else ""
    return (
        f"this is {notebook.name} ({', '.join(notebook.evidence)}): no root and no driver install there, so no "
        f"install script; the GPU comes from the platform's own setting:{steps} For another machine, run "
        "`gpudoctor collect` there and pass its snapshot with --from."
    )


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.errors import UsageError
    from gpudoctor.generate.install_script import generate_install_script
    from gpudoctor.generate.model import InstallScriptRequest

    if not args.from_path:  # the live machine: refused on a notebook platform, before anything is collected
        refusal = live_notebook_refusal()
        if refusal is not None:
            raise UsageError(refusal)
    if args.output and args.output != "-":
        refuse_existing(args.output, args.force)  # before collecting, not after
    framework, version = args.framework if args.framework else (None, None)
    request = InstallScriptRequest(
        distro=args.distro,
        driver=args.driver,
        cuda_toolkit=args.cuda_toolkit,
        cudnn=args.cudnn,
        container_toolkit=args.container_toolkit,
        framework=framework,
        framework_version=version,
        python=args.python,
        venv=args.venv,
        target=generator_target(args),
        vendor=generator_vendor(args),
        rocm=args.rocm,
    )
    return emit_generated(generate_install_script(request), args, executable=True)
