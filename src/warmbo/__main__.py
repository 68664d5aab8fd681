"""``python -m warmbo ...``: the ``warmbo`` command (:mod:`warmbo.cli`), for an environment whose
scripts folder is not on the PATH, or to run a checkout's sources with ``PYTHONPATH=src``."""

from .cli import app

app(prog_name="warmbo")
