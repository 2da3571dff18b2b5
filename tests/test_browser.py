"""The dashboards in a real browser: served on localhost, opened page by page in headless Chromium.

Each page must render, show a number counted here straight from the warehouse tables, and show no
Streamlit exception. A full-page screenshot of each lands in tests/screenshots/ (gitignored).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse


from tests.conftest import IWH, held_by_another_process, reader
import pytest

from inductor_warehouse.dashboards.serve import streamlit_command
from tests.test_dashboards import build_warehouse

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "tests" / "screenshots"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(),
                       reason=f"{CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium)"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> str:
    return build_warehouse(tmp_path_factory.mktemp("browser"))


@pytest.fixture(scope="module")
def server(warehouse):
    yield from serve(warehouse)


@pytest.fixture(scope="module")
def harness_warehouse(tmp_path_factory) -> str:
    from tests.conftest import build_harness_warehouse
    from tests.test_dashboards import with_copy

    return with_copy(build_harness_warehouse(tmp_path_factory.mktemp("browser_harness")))


@pytest.fixture(scope="module")
def harness_server(harness_warehouse):
    yield from serve(harness_warehouse)


def serve(warehouse: str, app: Path | None = None):
    port = free_port()
    # the command `iwh dashboard` runs, so its settings (no usage stats, no toolbar) are what is tested
    command = streamlit_command(warehouse, port, "127.0.0.1", **({"app": app} if app else {}))
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "IWH_DB": warehouse})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("streamlit did not come up: " + proc.stdout.read().decode(errors="replace")[-2000:])
    yield url
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        yield b
        b.close()


def watch(tab) -> list[str]:
    """What a page must not do on an internal network: log a console error (a 404 included: opened at
    a page's own URL, Streamlit's frontend used to ask /<page>/_stcore/health and host-config first,
    until dashboards/launch.py told it where the server is), fail to load a resource, or ask any host
    but this one."""
    problems: list[str] = []

    def request(r):
        url = urlparse(r.url)
        if url.scheme not in ("data", "blob", "about") and url.hostname not in ("127.0.0.1", "localhost"):
            problems.append(f"request to {r.url}")

    def console(m):
        if m.type == "error":
            problems.append(f"console {m.type}: {m.text} ({m.location['url']})")

    tab.on("request", request)
    tab.on("response", lambda r: problems.append(f"{r.status} for {r.url}") if r.status >= 400 else None)
    tab.on("console", console)
    tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    return problems


def one(db: str, sql: str, params=None):
    con = reader(db + ".check")
    try:
        return con.execute(sql, params or []).fetchall()[0][0]
    finally:
        con.close()


def expected(db: str) -> dict[str, tuple[str, str | None, str]]:
    """Per page: the URL path, a metric label (None: anywhere on the page) and the text it must show."""
    transformer = one(db, "SELECT run_id FROM runs WHERE model = 'transformer' AND compiler_version = '2.13.0+cpu'")
    kernels = one(db, "SELECT count(*) FROM kernels WHERE generated")
    versioned = one(db, "SELECT count(*) FROM runs WHERE compiler_version IS NOT NULL")
    both = one(db, "SELECT count(*) FROM (SELECT model FROM runs WHERE compiler_version = '2.6.0+cu124' "
                   "INTERSECT SELECT model FROM runs WHERE compiler_version = '2.14.1+cu130')")
    run_kernels = one(db, "SELECT count(*) FROM kernels WHERE generated AND run_id = ?", [transformer])
    breaks = one(db, "SELECT count(*) FROM compile_events WHERE kind = 'graph_break'")
    compiled = one(db, "SELECT count(DISTINCT run_id) FROM compilations")
    # What changed when opens on the model whose workload has runs of the most compiler versions
    first_model = one(db, "SELECT model FROM run_workloads WHERE run_id NOT IN (SELECT run_id FROM harness_holders) "
                          "GROUP BY model, workload ORDER BY count(DISTINCT compiler_version) DESC, model LIMIT 1")
    first_model_runs = one(db, "SELECT count(*) FROM runs WHERE model = ?", [first_model])
    return {
        "overview": ("", "Kernels", f"{kernels:,}"),
        "trends": ("trends", None, f"The {versioned:,} runs behind the charts"),
        "compare": ("compare", None, f"{both} models on both sides"),
        "changes": ("changes", None, f"series of {first_model_runs} runs of {first_model}"),
        "explorer": (f"explorer?run={transformer}", "Kernels", f"{run_kernels:,}"),
        "graph_breaks": ("graph_breaks", "Graph breaks", f"{breaks:,}"),
        "compile_time": ("compile_time", None, f"from {compiled:,} runs"),
        "sql_console": ("sql_console", None, "Start from a canned query"),
    }


def expected_suite(db: str) -> tuple[str, str | None, str]:
    """The Benchmark suite page, on the harness captures: the runs that hold harness CSVs and no file a
    compile wrote (counted from the artifacts table)."""
    held = one(db, "SELECT count(DISTINCT run_id) FROM artifacts WHERE kind = 'harness' AND run_id NOT IN "
                   "(SELECT run_id FROM artifacts WHERE kind NOT IN ('harness', 'manifest', 'other'))")
    return "suite", None, f"{held} runs hold harness results alone"


@pytest.mark.parametrize("page", ["overview", "trends", "compare", "changes", "suite", "explorer", "graph_breaks",
                                  "compile_time", "sql_console"])
def test_page_renders_in_chromium(page, request, browser):
    if page == "suite":  # the benchmark harness's numbers: on its captures, which the main warehouse lacks
        warehouse, server = request.getfixturevalue("harness_warehouse"), request.getfixturevalue("harness_server")
        path, metric, text = expected_suite(warehouse)
    else:
        warehouse, server = request.getfixturevalue("warehouse"), request.getfixturevalue("server")
        path, metric, text = expected(warehouse)[page]
    tab = browser.new_page(viewport={"width": 1500, "height": 2400})
    problems = watch(tab)
    try:
        tab.goto(f"{server}/{path}")
        tab.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=60_000)
        # rendered: the script finished (no running indicator) and the known number is on screen
        tab.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
        if metric:
            # exact: a metric's value is alone in its element ("16" must not match "216")
            tile = tab.locator('[data-testid="stMetric"]', has_text=metric).first
            tile.locator('[data-testid="stMetricValue"]').get_by_text(text, exact=True).wait_for(timeout=30_000)
        else:
            # the visible one: the same words also stand in collapsed expanders (the markdown behind Compare)
            tab.get_by_text(text, exact=False).filter(visible=True).first.wait_for(timeout=30_000)
        # charts and lazy widgets stand as skeletons until drawn
        tab.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)
        tab.wait_for_timeout(500)
        assert tab.locator('[data-testid="stException"]').count() == 0
        # no Deploy button or developer menu: a team's shared dashboard is not for deploying
        assert tab.locator('[data-testid="stAppDeployButton"]').count() == 0
        SHOTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(SHOTS / f"{page}.png"), full_page=True)
        assert problems == []
    finally:
        tab.close()


def test_sql_console_runs_in_chromium(warehouse, server, browser):
    tab = browser.new_page(viewport={"width": 1500, "height": 1400})
    problems = watch(tab)
    try:
        tab.goto(f"{server}/sql_console")
        tab.get_by_role("button", name="Run").click()
        groups = one(warehouse, "SELECT count(*) FROM (SELECT DISTINCT model, compiler_version, device FROM runs)")
        tab.get_by_text(f"{groups:,} rows").wait_for(timeout=30_000)
        tab.locator('[data-testid="stDataFrame"]').wait_for(timeout=30_000)
        tab.wait_for_timeout(500)
        assert tab.locator('[data-testid="stException"]').count() == 0
        SHOTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(SHOTS / "sql_console_result.png"), full_page=True)
        assert problems == []
    finally:
        tab.close()



def test_an_exception_shows_its_details_without_outside_links(warehouse, browser, tmp_path):
    """Served with the dashboard's settings, an app's exception shows its type and message, and no
    'Ask Google' / 'Ask ChatGPT' links (this tool runs inside companies' networks)."""
    app = tmp_path / "fails.py"
    app.write_text("import streamlit as st\nst.title('x')\nraise ValueError('the details stay visible')\n")
    for url in serve(warehouse, app):
        tab = browser.new_page()
        problems = watch(tab)
        try:
            tab.goto(url)
            tab.locator('[data-testid="stException"]').wait_for(timeout=60_000)
            shown = tab.locator('[data-testid="stException"]').inner_text()
            assert "ValueError" in shown and "the details stay visible" in shown
            links = [a.get_attribute("href") or "" for a in tab.locator('[data-testid="stException"] a').all()]
            assert not [h for h in links if "google" in h or "chatgpt" in h or "openai" in h], links
            assert problems == []
        finally:
            tab.close()


def test_trends_point_click_picks_its_run(warehouse, server, browser):
    """Clicking a run's point on a Trends chart picks that run to open (the chart's selection reaches
    the page): the points are Vega-Lite marks whose accessible labels carry their tooltip."""
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'cnn' AND compiler_version = '2.13.0+cpu'")
    tab = browser.new_page(viewport={"width": 1500, "height": 2400})
    problems = watch(tab)
    try:
        tab.goto(f"{server}/trends")
        tab.wait_for_selector('[data-testid="stVegaLiteChart"] svg', timeout=60_000)
        point = tab.locator('[data-testid="stVegaLiteChart"]').first.locator(
            f'path[role="graphics-symbol"][aria-label*="run_id: {run_id}"]')
        # Streamlit draws a chart's frame first and its data after: wait for the marks themselves
        point.first.wait_for(timeout=60_000)
        # under load Vega may draw the marks again after the first draw: wait until one is there
        from playwright.sync_api import expect

        expect(point).to_have_count(1, timeout=30_000)
        point.click(force=True)
        # the page reruns with that run picked, offering to open it
        tab.get_by_role("button", name=f"Open run {run_id} in the Run explorer").wait_for(timeout=30_000)
        assert problems == []
    finally:
        tab.close()


def test_an_ingest_gets_in_while_a_served_dashboard_keeps_the_file_open(tmp_path, browser, monkeypatch):
    """A served dashboard keeps its file warehouse open between queries (store.protocol.Kept): an
    ingest from another process must still get in, at once, and the dashboard then shows its run."""
    import json

    from inductor_warehouse.ingest.load import ingest_paths
    from tests.test_dashboards import FIXTURES, SINGLE_RUN, with_copy

    db = str(tmp_path / "served.duckdb")
    ingest_paths([str(SINGLE_RUN)], db)
    monkeypatch.setenv("IWH_KEEP_OPEN_S", "300")  # only the ingest's waiting can make it let go in time
    served = serve(db)
    url = next(served)
    tab = browser.new_page(viewport={"width": 1500, "height": 1600})
    problems = watch(tab)
    try:
        tab.goto(url)
        tab.locator('[data-testid="stMetric"]', has_text="Runs").first.locator(
            '[data-testid="stMetricValue"]').get_by_text("1", exact=True).wait_for(timeout=60_000)
        # the page's queries are done and their connections closed, yet the server holds the file
        assert held_by_another_process(db)
        t0 = time.monotonic()
        added = subprocess.run([*IWH, "ingest", str(FIXTURES / "runs" / "cpu-torch2.13"), "--db", db, "--wait", "60",
                                "--format", "json"], capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert added.returncode == 0, added.stderr[-2000:]
        assert time.monotonic() - t0 < 30  # let in when it asked, not after the dashboard's 300 s
        (run_id,) = json.loads(added.stdout)["run_ids"]
        with_copy(db)  # counted on a copy: this process must not hold the served file
        kernels = one(db, "SELECT count(*) FROM kernels WHERE generated AND run_id = ?", [run_id])
        tab.goto(f"{url}/explorer?run={run_id}")
        tile = tab.locator('[data-testid="stMetric"]', has_text="Kernels").first
        tile.locator('[data-testid="stMetricValue"]').get_by_text(f"{kernels:,}", exact=True).wait_for(
            timeout=60_000)
        assert problems == []
    finally:
        tab.close()
        next(served, None)


def test_trends_is_readable_at_1280_px(warehouse, server, browser):
    """At a laptop's 1280 px every Trends chart keeps its plot at least half the main column wide (the
    legend goes under it), no two charted workloads share a colour, and the legend is there to click."""
    tab = browser.new_page(viewport={"width": 1280, "height": 2400})
    problems = watch(tab)
    try:
        tab.goto(f"{server}/trends")
        tab.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
        tab.wait_for_selector('[data-testid="stVegaLiteChart"] svg', timeout=60_000)
        tab.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)
        tab.wait_for_timeout(500)
        main = tab.locator('[data-testid="stMainBlockContainer"]').bounding_box()
        charts = tab.locator('[data-testid="stVegaLiteChart"]').all()
        assert len(charts) >= 4
        for chart in charts:
            # the plot area: the background of Vega's root frame, inside the axes and legend
            plot = chart.locator("svg g.role-frame.root > g > path.background").first.bounding_box()
            assert plot["width"] >= main["width"] / 2, (plot, main)
            assert plot["height"] >= 150, plot
            legend = chart.locator('g[aria-roledescription="legend"]')
            assert legend.count() == 1
            # below the plot, not beside it
            assert legend.bounding_box()["y"] >= plot["y"] + plot["height"]
            colours = chart.locator('g[aria-roledescription="legend"] .role-legend-symbol path').evaluate_all(
                "els => els.map(e => e.getAttribute('fill'))")
            assert colours and len(set(colours)) == len(colours), colours
        # a click on a legend entry brings its workload forward: the other lines fade
        first = charts[0]
        lines = first.locator("g.mark-line path")

        def faded() -> int:
            return sum(float(o or 1) < 0.5 for o in lines.evaluate_all("els => els.map(e => e.getAttribute('opacity'))"))

        assert lines.count() >= 2 and faded() == 0
        first.locator('g[aria-roledescription="legend"] .role-legend-symbol path').first.click(force=True)
        tab.wait_for_timeout(500)
        assert faded() == lines.count() - 1
        SHOTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(SHOTS / "trends_1280.png"), full_page=True)
        assert problems == []
    finally:
        tab.close()


def test_suite_page_at_1280_px_charts_hud_and_a_click_opens_a_points_models(harness_warehouse, harness_server,
                                                                             browser):
    """At a laptop's 1280 px: HUD's four charts, two a row, each plot at least 35% of the main column
    wide (a half column less its axis) with its legend under it; a click on a point (2.14.1 of
    inductor's line) brings that point's models, each against 2.13, with HUD's flags and links to the
    compiles in the Run explorer."""
    run_id = one(harness_warehouse, "SELECT run_id FROM runs WHERE source_path LIKE "
                                    "'%/cpu-torch2.14.1/performance/deit_tiny_patch16_224.fb_in1k'")
    tab = browser.new_page(viewport={"width": 1280, "height": 2400})
    problems = watch(tab)
    try:
        tab.goto(f"{harness_server}/suite")
        tab.wait_for_selector('[data-testid="stVegaLiteChart"] svg', timeout=60_000)
        tab.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
        tab.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)
        tab.wait_for_timeout(500)
        assert tab.locator('[data-testid="stException"]').count() == 0
        main = tab.locator('[data-testid="stMainBlockContainer"]').bounding_box()
        charts = tab.locator('[data-testid="stVegaLiteChart"]').all()
        assert len(charts) == 4
        titles = [c.locator("g.role-title text").first.text_content() for c in charts]
        assert titles == ["Pass rate", "Geomean speedup (x)", "Mean compilation latency (s)",
                          "Peak memory compression ratio (x)"]
        boxes = []
        for chart in charts:
            plot = chart.locator("svg g.role-frame.root > g > path.background").first.bounding_box()
            assert plot["width"] >= main["width"] * 0.35 and plot["height"] >= 150, (plot, main)
            legend = chart.locator('g[aria-roledescription="legend"]').bounding_box()
            assert legend["y"] >= plot["y"] + plot["height"]
            boxes.append(plot)
        # two a row (a few pixels apart where one chart's axis labels are taller)
        assert abs(boxes[0]["y"] - boxes[1]["y"]) < 10 and abs(boxes[2]["y"] - boxes[3]["y"]) < 10
        assert boxes[2]["y"] > boxes[0]["y"] + boxes[0]["height"]
        SHOTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(SHOTS / "suite_1280.png"), full_page=True)
        # click 1: a point of the geomean speedup chart
        point = charts[1].locator('path[role="graphics-symbol"][aria-label*="point: 2.14.1+cu130"]'
                                  '[aria-label*="backend: inductor"]')
        assert point.count() == 1
        point.click(force=True)
        tab.get_by_text("timm_models at 2.14.1+cu130: inductor").wait_for(timeout=30_000)
        tab.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
        tab.wait_for_timeout(2000)  # the grid draws its canvas after the page settles
        caption = tab.get_by_text("3 models at 2.14.1+cu130, against 2.13.0+cpu")
        assert caption.count() == 1
        table = tab.locator('[data-testid="stDataFrame"]').last
        assert table.bounding_box()["width"] >= main["width"] * 0.8
        tab.screenshot(path=str(SHOTS / "suite_1280_point.png"), full_page=True)
        # the point is in the URL: a shared link opens the same models
        assert "at=2.14.1%2Bcu130" in tab.url and "line=inductor" in tab.url
        # click 2: a model's run (the link the grid draws) opens it in the Run explorer
        tab.goto(f"{harness_server}/explorer?run={run_id}")
        tab.locator('[data-testid="stMetric"]', has_text="Kernels").first.wait_for(timeout=60_000)
        assert problems == []
    finally:
        tab.close()


# per page: the table that carries its answer (its place among the page's tables) and its columns
VERDICT_TABLES = {
    "compare": (0, ["workload", "metric", "base", "head", "delta", "pct", "verdict"]),
    "": (1, ["workload", "compiler", "fusion rate", "kernels", "failures"]),
    "compile_time": (0, ["workload · compiler", "total s", "Dynamo", "AOT", "Inductor", "code gen"]),
}


@pytest.mark.parametrize("path", list(VERDICT_TABLES), ids=lambda p: p or "overview")
def test_the_answer_fits_at_1280_px_with_no_console_error(path, server, browser):
    """Opened by its own URL at a laptop's 1280 px: no console error, and the table that answers shows
    every column without scrolling sideways (its grid scrolls no wider than it is)."""
    index, columns = VERDICT_TABLES[path]
    tab = browser.new_page(viewport={"width": 1280, "height": 1000})
    problems = watch(tab)
    try:
        tab.goto(f"{server}/{path}")
        tab.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=60_000)
        tab.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=60_000)
        grid = tab.locator('[data-testid="stDataFrame"]').nth(index)
        grid.wait_for(timeout=60_000)
        tab.wait_for_timeout(1000)
        heads = [h.inner_text() for h in grid.locator('[role="columnheader"]').all()]
        assert [c for c in columns if c not in heads] == [], heads
        scroller = grid.locator(".dvn-scroller").first
        wide, shown = scroller.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert wide <= shown, (path, wide, shown)
        SHOTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(SHOTS / f"1280-{path or 'overview'}.png"))
        assert problems == []
    finally:
        tab.close()
