"""One module per paper's experiments (and the demo); each returns results and writes JSON + plots."""
