"""The ``warmbo`` command's entry point, outside the ``warmbo`` package on purpose.

Importing :mod:`warmbo.cli` takes about half a second (numpy, scipy, the package itself), and Ctrl-C
in that time printed Python's traceback of whatever module was loading (a chemist user test pressed
it at once on a mistyped command). Only a module that imports nothing of warmbo before its ``try``
can catch that: the package's own ``__init__`` would already be loading.
"""

import sys


def main() -> None:
    """Import the command line and run it; Ctrl-C while it loads says so in one line, status 130."""
    try:
        from warmbo.cli import app
    except KeyboardInterrupt:
        sys.stderr.write("stopped by Ctrl-C while starting: nothing was done\n")
        raise SystemExit(130) from None
    app(prog_name="warmbo")


if __name__ == "__main__":
    main()
