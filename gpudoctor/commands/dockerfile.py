"""``gpudoctor dockerfile``: a Dockerfile whose CUDA base and framework build fit the machine."""

from __future__ import annotations

import argparse

from gpudoctor.commands.common import guarded, refuse_existing
from gpudoctor.commands.generated import emit_generated, generator_target


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.generate.dockerfile import generate_dockerfile
    from gpudoctor.generate.model import DockerfileRequest

    if args.output and args.output != "-":
        refuse_existing(args.output, args.force)  # before collecting, not after
    framework, version = args.framework
    request = DockerfileRequest(
        framework=framework,
        framework_version=version,
        python=args.python,
        flavor=args.flavor,
        os=args.os,
        cpu=args.cpu,
        requirements=args.requirements,
        target=generator_target(args),
    )
    return emit_generated(generate_dockerfile(request), args)
