"""``python -m fastppl``: the ``fastppl`` command (:func:`fastppl.cli.main`), for environments
where the console script is not on ``PATH``."""

import sys

from fastppl.cli import main

if __name__ == "__main__":  # (imported, as by the doctest runner, it runs nothing)
    sys.exit(main())
