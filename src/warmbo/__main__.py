"""``python -m warmbo ...``: the ``warmbo`` command (:mod:`warmbo.cli`), for an environment whose
scripts folder is not on the PATH, or to run a checkout's sources with ``PYTHONPATH=src``. The
package itself is imported before this module runs, so a Ctrl-C in that part of the start still
shows Python's traceback; the ``warmbo`` command (:mod:`warmbo_command`) says it in one line."""

from warmbo_command import main

main()
