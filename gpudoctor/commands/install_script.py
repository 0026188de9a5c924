"""``gpudoctor install-script``: a bash script that installs the driver, CUDA, cuDNN, the container
toolkit and a framework venv for this distro."""

from __future__ import annotations

import argparse

from gpudoctor.commands.common import guarded, refuse_existing
from gpudoctor.commands.generated import emit_generated, generator_target, generator_vendor


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.generate.install_script import generate_install_script
    from gpudoctor.generate.model import InstallScriptRequest

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
