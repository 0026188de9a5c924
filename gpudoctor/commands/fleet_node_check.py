"""``gpudoctor fleet node-check``: what ``fleet run`` starts on each node.  The check, its JSON report printed
as tagged lines (:mod:`gpudoctor.fleet.frames`) for the gatherer to take back apart."""

from __future__ import annotations

import argparse
import sys

from gpudoctor.commands.node_run import produce_report, verdict_of


def run(args: argparse.Namespace) -> int:
    from gpudoctor.errors import InputError
    from gpudoctor.fleet.frames import encode, encode_failure
    from gpudoctor.fleet.nodes import expand_node, this_node_name
    from gpudoctor.render.json_report import report_to_dict
    from gpudoctor.results import EXIT_USAGE

    node = this_node_name()
    try:
        if args.from_path:
            args.from_path = expand_node(args.from_path, node)
        args.format = "json"
        node_run = produce_report(args)
    except InputError as exc:
        # The gatherer reads only tagged lines: without this one it would know only that no report came.
        sys.stdout.write(encode_failure(node, EXIT_USAGE, str(exc)) + "\n")
        sys.stdout.flush()
        raise  # and the usual one line on stderr, exit 2
    verdict = verdict_of(node_run, args)
    exit_code = verdict.exit_code("gpudoctor")
    for line in encode(node, exit_code, dict(report_to_dict(node_run.report, exit_code))):
        sys.stdout.write(line + "\n")
    sys.stdout.flush()
    return exit_code
