"""A child process forked while another thread of the parent holds a study's write transaction
(the study's lock, and the store's), for the tests of what such a child can still do."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable


def fork_while_writing(study, child: Callable[[], bool], patience: int = 30) -> int:
    """Fork while a thread of this process is inside ``study.transaction()``; the child runs
    ``child()`` and exits 0 when it returns True (2 when False, 1 on an exception; a deadlock ends
    it by SIGALRM after ``patience`` seconds). The writer then commits; returns the child's wait
    status (``os.waitpid``)."""
    inside, done = threading.Event(), threading.Event()

    def writer():
        with study.transaction():
            inside.set()
            done.wait(patience)

    thread = threading.Thread(target=writer)
    thread.start()
    inside.wait(patience)
    pid = os.fork()
    if pid == 0:  # the child: the parent's writer thread does not exist here
        code = 1
        try:
            signal.alarm(patience)
            code = 0 if child() else 2
        finally:
            os._exit(code)
    done.set()
    thread.join()
    return os.waitpid(pid, 0)[1]
