"""The HTML report as a browser shows it: rendered by headless Chromium (Debian's package; make test
installs it), not only parsed. A wrapper page loads the report in an iframe and writes, into its
own title, each image's alt text and decoded size, which ``--dump-dom`` then prints."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess

import warmbo as wb

WRAPPER = """<!DOCTYPE html><html><head><title>pending</title></head><body>
<iframe id="f" src="rep/report.html" style="width:1200px;height:3000px"></iframe>
<script>
document.getElementById("f").onload = function () {
  var images = Array.from(this.contentDocument.images);
  document.title = JSON.stringify(images.map(function (i) { return [i.alt, i.naturalWidth, i.complete]; }));
};
</script></body></html>"""


def rendered_images(folder) -> list:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "headless Chromium is needed: apt-get install chromium (make test installs it)"
    (folder / "wrapper.html").write_text(WRAPPER)
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
         "--virtual-time-budget=5000", "--dump-dom", (folder / "wrapper.html").as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    title = re.search(r"<title>(.*?)</title>", done.stdout, re.S)
    assert title is not None, done.stderr[-2000:]
    return json.loads(title.group(1).replace("&quot;", '"'))


def test_the_report_shows_its_calibration_plot_and_figures_in_chromium(tmp_path):
    from typer.testing import CliRunner

    from warmbo.cli import app

    space = wb.Space([wb.Float("x", 0.0, 1.0)])
    url = str(tmp_path / "a.db")
    wb.Optimizer(space, seed=0, storage=url).run(lambda p: math.sin(7 * p["x"]), budget=14, progress=False)
    assert CliRunner().invoke(app, ["report", url, "--out", str(tmp_path / "rep")]).exit_code == 0
    images = {alt: (width, complete) for alt, width, complete in rendered_images(tmp_path)}
    assert images["calibration"][0] > 100 and images["calibration"][1]  # decoded and drawn
    assert {"best so far", "observed"} <= set(images)
    assert all(width > 0 for width, _ in images.values())
