"""The tables of a study as the first warmbo versions wrote them: no ``vector`` (multi-task) and no
``heartbeat`` column. Tests create such files to check that newer versions read them."""

FIRST_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE trials (id INTEGER PRIMARY KEY AUTOINCREMENT, params TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'complete', 'failed')), value REAL,
    created REAL NOT NULL, completed REAL, worker TEXT, error TEXT);
"""
