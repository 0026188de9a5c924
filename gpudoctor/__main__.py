"""``python -m gpudoctor`` runs the command-line interface."""

import sys

from gpudoctor.cli import main

sys.exit(main())
