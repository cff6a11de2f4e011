"""``python -m sparqlab`` runs the ``sparqlab`` command."""

import sys

from sparqlab.cli import main

sys.exit(main())
