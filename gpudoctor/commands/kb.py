"""``gpudoctor kb [TOPIC [ITEM]]``: what the knowledge base holds and how current it is."""

from __future__ import annotations

import argparse
import json
import sys

from gpudoctor.commands.common import guarded
from gpudoctor.errors import UsageError
from gpudoctor.results import EXIT_OK


@guarded
def main(args: argparse.Namespace) -> int:
    from gpudoctor.kb import kb_info
    from gpudoctor.kb.describe import render_kb_text

    if args.format == "json":
        if args.topic:
            raise UsageError("--format json prints the overview; leave out TOPIC")
        sys.stdout.write(json.dumps(kb_info(), indent=2) + "\n")
    else:
        sys.stdout.write(render_kb_text(topic=args.topic, item=args.item))
    return EXIT_OK
