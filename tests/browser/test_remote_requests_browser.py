"""No user string makes a viewer's browser reach another host or run a script. A run is named like a Markdown
image (typed into its name box: a file name cannot hold the slashes) and like an HTML image with a script; every
page is visited, Export's buttons are used, and the exported chart is opened in the browser. Every request
to a host other than the server is counted (and answered with nothing): there must be none.
"""

from __future__ import annotations

import pytest

from tests.browser.helpers import ARTIFACTS, PAGE_STATES, ROOT, WAIT_MS, asking, expect, settle

pytestmark = pytest.mark.browser

SAMPLE = ROOT / "sample_data" / "icd9"
BEACON = "beacon.invalid"
NAMES = [f"![r](http://{BEACON}/r.png)", f'<img src="http://{BEACON}/i.png" onerror="window.__ran=1">']


def test_no_user_string_reaches_another_host_or_runs(page, server, tmp_path):
    remote: list[str] = []

    def outside(route):
        remote.append(route.request.url)
        route.abort()

    context = page.context.browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    context.route(
        lambda url: url.startswith(("http:", "https:", "ws:", "wss:")) and not url.startswith(server), outside
    )
    pg = context.new_page()
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    pg.goto(server)
    settle(pg, "[data-testid=stTable]")
    pg.get_by_text("Upload files").click()
    settle(pg, "text=Upload a gold standard")
    inputs = pg.locator("[data-testid=stFileUploader] input[type=file]")
    inputs.nth(1).set_input_files([str(SAMPLE / "run_overcoder.csv"), str(SAMPLE / "run_siblings.csv")])
    settle(pg, "[data-testid=stSidebar] >> text=Name of run 2 (run_siblings.csv)")
    inputs.nth(0).set_input_files(str(SAMPLE / "gold.csv"))
    settle(pg, "[data-testid=stTable]")
    for i, name in enumerate(NAMES):
        box = pg.get_by_label(f"Name of run {i + 1} (run_", exact=False).first
        box.fill(name)
        box.press("Enter")
        expect(box).to_have_value(name)
        pg.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=WAIT_MS)

    for link, state in PAGE_STATES.items():
        pg.get_by_role("link", name=link).click()
        settle(pg, state)
        pg.screenshot(path=ARTIFACTS / f"remote_{link.replace(' ', '_')}.png", full_page=True)

    # Export: a table and the levels chart downloaded; the chart opened in the browser
    with pg.expect_download(timeout=WAIT_MS) as table:
        pg.get_by_role("button", name="Every code and family").click()
    assert table.value.failure() is None
    assert table.value.suggested_filename.endswith(".csv") and "/" not in table.value.suggested_filename
    asking(pg, "Levels chart, all runs").click()
    ready = pg.get_by_role("button", name="Levels chart, all runs ·", exact=False)
    expect(ready).to_be_visible(timeout=WAIT_MS)
    with pg.expect_download(timeout=WAIT_MS) as chart:
        ready.click()
    chart_file = tmp_path / "chart.html"
    chart.value.save_as(chart_file)
    viewer = context.new_page()
    viewer.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    viewer.goto(chart_file.as_uri())
    viewer.wait_for_selector(".js-plotly-plot .legend", timeout=WAIT_MS)
    assert viewer.evaluate("window.__ran === undefined")
    assert pg.evaluate("window.__ran === undefined")
    context.close()

    assert remote == [], remote
    assert dialogs == [], dialogs
