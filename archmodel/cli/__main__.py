"""``python -m archmodel.cli``: the ``archmodel`` command."""

import sys

from . import main

sys.exit(main())
