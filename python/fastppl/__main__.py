"""``python -m fastppl``: the ``fastppl`` command (:func:`fastppl.cli.main`), for environments
where the console script is not on ``PATH``."""

import sys

from fastppl.cli import main

sys.exit(main())
