"""The provenance viewer in a real browser at 1280 px: opened by its URL on a kernel or a model line,
its panels light the nodes, kernels and model lines the warehouse links (the page script's walk
held to analysis/provenance.py's, and to the graph folder's own mapping file), and stay readable."""

from __future__ import annotations

import json
import shutil
import tarfile
from urllib.parse import urlencode

import pytest

from inductor_warehouse.analysis import provenance
from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, GPU_TRAIN_RUN, build_fixture_warehouse
from tests.test_browser import CHROMIUM, SHOTS, browser, serve, watch  # noqa: F401 - fixtures
from tests.test_dashboards import with_copy

pytestmark = [pytest.mark.browser, pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(),
                                                      reason=f"{CHROMIUM} is absent")]

TRANSFORMER_213 = "b6891344ca4df3f9"  # content hashes: the same wherever the fixtures lie
GPU_MLP_TRAIN = "95584ecbc78c29d7"
PANELS = {"pre": "pre", "post": "post", "kernel": "kernel"}
MODES = FIXTURES / "captures" / "cpu-torch2.13-2.14.1-modes.tar.xz"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """The shared fixture warehouse, plus an AOTInductor run (CPU, torch 2.13) and a Spyre run with
    its provenance sidecar."""
    root = tmp_path_factory.mktemp("provenance_browser")
    with tarfile.open(MODES) as tf:
        tf.extractall(root / "modes", filter="data", members=[m for m in tf.getmembers() if "cpu-2.13/aoti" in m.name])
    spyre = root / "spyre"
    shutil.copytree(FIXTURES / "spyre" / "add", spyre / "inductor-spyre" / "sdsc_fused_linear_relu_0")
    shutil.copy(FIXTURES / "spyre_provenance" / "level0_and_fused" / "spyre_provenance.json", spyre)
    db = build_fixture_warehouse(root)
    ingest_paths([str(root / "modes" / "cpu-2.13" / "aoti"), str(spyre)], db)
    return with_copy(db)


@pytest.fixture(scope="module")
def url(db):
    yield from serve(db)


def model_of(db: str, run_id: str, graph_id: str) -> provenance.Provenance:
    with Warehouse(db + ".check") as w:
        texts = {r["kind"]: r["text"] for r in run_query(w, "explore/provenance_texts", run_id=run_id, graph_id=graph_id)}
        links = run_query(w, "explore/provenance_links", run_id=run_id, graph_id=graph_id)
        kernels = run_query(w, "explore/kernels", run_id=run_id, graph_id=graph_id, limit=5000)
        sources = None if texts else {
            k["kernel_name"]: run_query(w, "explore/kernel_source", source_hash=k["source_hash"])[0]["source"]
            for k in kernels if k["generated"]}
    return provenance.build(texts, links, [k["kernel_name"] for k in kernels], sources)


def only_run(db: str, where: str) -> tuple[str, str]:
    with Warehouse(db + ".check") as w:
        return w.sql(f"SELECT g.run_id, g.graph_id FROM graphs g JOIN runs r USING (run_id) WHERE {where}").rows()[0]


def open_viewer(browser, url: str, name: str, **params):  # noqa: F811 - the fixture
    tab = browser.new_page(viewport={"width": 1280, "height": 1000})
    problems = watch(tab)
    tab.goto(f"{url}/explorer?{urlencode({**params, 'tab': 'Provenance'})}")
    tab.wait_for_selector("iframe", timeout=60_000)
    frame = None
    for _ in range(120):
        frame = next((f for f in tab.frames if f.query_selector("#panels")), None)
        if frame is not None and frame.query_selector(".sel, .hl"):
            break
        tab.wait_for_timeout(500)
    assert frame is not None, "no viewer on the page"
    tab.locator("iframe").first.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(SHOTS / f"provenance_{name}.png"))
    return tab, frame, problems


def lit(frame) -> dict[str, set[str]]:
    """What the page lights: item names per panel, and the model lines."""
    out = {}
    for kind in PANELS:
        out[kind] = set(frame.eval_on_selector_all(f"#p-{kind} .l.item.hl, #p-{kind} .l.item.sel",
                                                   "els => els.map(e => e.dataset.name)"))
    out["line"] = set(frame.eval_on_selector_all("#model .m.hl, #model .m.sel", "els => els.map(e => e.dataset.line)"))
    return out


def readable(tab, frame) -> None:
    """Side by side within 1280 px, each panel wide enough to read a node's name, text no smaller
    than 12 px, and the page not scrolled sideways."""
    boxes = [frame.locator(f"#p-{k}").bounding_box() for k in PANELS]
    assert all(b["width"] >= 220 for b in boxes), boxes
    assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"] and abs(boxes[0]["y"] - boxes[2]["y"]) < 2  # one row
    frame_box = tab.locator("iframe").first.bounding_box()
    assert frame_box["x"] + frame_box["width"] <= 1280
    assert tab.evaluate("document.documentElement.scrollWidth") <= 1280
    size = frame.eval_on_selector("#p-kernel .l", "e => parseFloat(getComputedStyle(e).fontSize)")
    assert size >= 12


@pytest.mark.parametrize("run_id, graph_id, kernel", [
    (TRANSFORMER_213, "0_forward", "cpp_fused_gelu_view_2"),  # C++ kernels (CPU, torch 2.13)
    (GPU_MLP_TRAIN, "0_forward", "triton_poi_fused_gelu_0"),  # Triton (H200, torch 2.11)
], ids=["cpp", "triton"])
def test_a_kernels_url_lights_its_nodes_and_model_lines(browser, url, db, run_id, graph_id, kernel):  # noqa: F811
    tab, frame, problems = open_viewer(browser, url, graph_id + "_" + kernel, run=run_id, graph=graph_id, kernel=kernel)
    expected = model_of(db, run_id, graph_id).related("kernel", kernel)
    got = lit(frame)
    assert got == expected
    assert frame.eval_on_selector_all("#p-kernel .l.sel", "els => els.map(e => e.dataset.name)")[:1] == [kernel]
    if run_id == GPU_MLP_TRAIN:  # the graph folder's own mapping file, read here
        mapping = json.loads(next(GPU_TRAIN_RUN.rglob("model__0_forward_*/inductor_provenance_tracking_node_mappings.json"))
                             .read_text())
        assert got["post"] == {p for k, ps in mapping["cppCodeToPost"].items() if k.rpartition(":")[0] == kernel for p in ps}
    else:
        assert got["line"] and all(line.endswith((":28", ":65")) for line in got["line"])
    assert "kernel " + kernel in frame.inner_text("#chosen")
    share = frame.get_attribute("#share", "href")
    assert f"kernel={kernel}" in share and "tab=Provenance" in share and f"run={run_id}" in share
    readable(tab, frame)
    assert problems == []
    tab.close()


def test_a_model_lines_url_lights_the_kernels_it_became_and_a_click_moves_the_choice(browser, url, db):  # noqa: F811
    with Warehouse(db + ".check") as w:
        rows = run_query(w, "lineage/source_line_kernels", run=TRANSFORMER_213, line=28)
    line = f"{rows[0]['file']}:28"
    tab, frame, problems = open_viewer(browser, url, "line_28", run=TRANSFORMER_213, graph="0_forward", line=line)
    model = model_of(db, TRANSFORMER_213, "0_forward")
    got = lit(frame)
    assert got == model.related("line", line)
    assert got["kernel"] and got["kernel"] <= set(rows[0]["kernel_names"])
    # a click on a post-grad node lights what it came from and became
    node = sorted(got["post"])[0]
    frame.click(f'#p-post .l.item[data-name="{node}"]')
    assert lit(frame) == model.related("post", node)
    assert problems == []
    tab.close()


@pytest.mark.parametrize("where, kernel", [
    ("r.model = 'aoti'", "cpp_fused_gelu_native_layer_norm_0"),  # AOTInductor's C++ (CPU, torch 2.13)
    ("r.device = 'spyre'", "sdsc_fused_linear_relu_0"),  # a Spyre kernel folder, lines from its sidecar
], ids=["aoti", "spyre"])
def test_aot_and_spyre_kernels_light_their_model_lines(browser, url, db, where, kernel):  # noqa: F811
    run_id, graph_id = only_run(db, where)
    tab, frame, problems = open_viewer(browser, url, kernel, run=run_id, kernel=kernel)  # no graph: the kernel's
    model = model_of(db, run_id, graph_id)
    got = lit(frame)
    assert got == model.related("kernel", kernel) and got["line"]
    # and back: the first lit model line lights the kernel
    line = sorted(got["line"])[0]
    frame.click(f'#model .m[data-line="{line}"]')
    assert kernel in lit(frame)["kernel"] and lit(frame) == model.related("line", line)
    readable(tab, frame)
    assert problems == []
    tab.close()
