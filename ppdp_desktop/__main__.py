"""``python -m ppdp_desktop`` runs the command-line interface."""
import sys

from ppdp_desktop.cli import main

sys.exit(main())
