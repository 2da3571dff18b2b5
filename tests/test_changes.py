"""What changed when, on a constructed series: the real CPU runs of three releases (2.6.0, 2.13,
2.14.1), each replicated as three "nightlies" (a `nightly` label in the manifest makes each copy a
run of its own). The change points found must be the ones the construction puts there: between
copies of one release nothing changes; at a release boundary what changed is what the two releases'
artifacts say, counted here from their output_code.py files."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.analysis.changes import changes
from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import chromium_spans, reader, unpack_cpu_corpora

KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", re.M)
RELEASES = ("2.6.0", "2.13", "2.14.1")
MODELS = ("mlp", "transformer", "cnn")


@pytest.fixture(scope="module")
def series(tmp_path_factory) -> tuple[str, dict]:
    root = tmp_path_factory.mktemp("changes")
    corpora = {next(p.glob("cpu-torch*")).name.removeprefix("cpu-torch"): next(p.glob("cpu-torch*"))
               for p in unpack_cpu_corpora(root / "corpora")}
    nights, kernels = {}, {}
    for release, model in ((r, m) for r in RELEASES for m in MODELS):
        src = corpora[release] / model
        kernels[(release, model)] = sum(len(KERNEL_DEF.findall(p.read_text())) for p in src.rglob("output_code.py"))
    for n in range(9):
        release = RELEASES[n // 3]
        night = f"2026-01-{n + 1:02d}"
        nights[night] = release
        for model in MODELS:
            dest = root / "nightlies" / night / model
            shutil.copytree(corpora[release] / model, dest)
            manifest = json.loads((dest / "manifest.json").read_text())
            (dest / "manifest.json").write_text(json.dumps(manifest | {"nightly": night}))
    db = str(root / "wh.duckdb")
    assert ingest_paths([root / "nightlies"], db, jobs=2).runs == 27
    return db, {"nights": nights, "kernels": kernels}


def test_kernel_count_change_points_are_the_constructed_ones(series):
    db, truth = series
    with reader(db) as con:
        for model in MODELS:
            report = changes(con, model, "nightly", ("kernels",))
            [(key, runs)] = report.series.items()
            assert [r["labels"]["nightly"] for r in runs] == sorted(truth["nights"])
            expected = []
            for n in range(1, 9):
                before = truth["kernels"][(RELEASES[(n - 1) // 3], model)]
                after = truth["kernels"][(RELEASES[n // 3], model)]
                if before != after:
                    expected.append((f"2026-01-{n:02d}", f"2026-01-{n + 1:02d}", before, after))
            got = [(p.before_at, p.after_at, p.changes[0].before, p.changes[0].after) for p in report.points]
            assert got == expected, model
    # the construction does put a kernel-count change at a release boundary for some model
    assert any(truth["kernels"][("2.6.0", m)] != truth["kernels"][("2.13", m)] for m in MODELS)


def test_kernel_identity_changes_only_at_release_boundaries(series):
    db, truth = series
    boundaries = {("2026-01-03", "2026-01-04"), ("2026-01-06", "2026-01-07")}
    with reader(db) as con:
        for model in MODELS:
            report = changes(con, model, "nightly")
            assert {(p.before_at, p.after_at) for p in report.points} <= boundaries, model
        transformer = changes(con, "transformer", "nightly", ("kernel_identity",))
    # 2.6.0 -> 2.13 rewrote the transformer's layer norm kernel (tests/test_compare.py reads its code)
    [first] = [p for p in transformer.points if p.before_at == "2026-01-03"]
    assert "code changed: cpp_fused_native_layer_norm" in first.changes[0].detail


def test_identity_digests_find_what_every_kernel_read_finds(series):
    """Kernel identities are compared by one digest a run, and read whole only beside a change: the
    change points and counts equal those of every run's kernels read here, one by one."""
    from collections import Counter

    db, truth = series
    found = 0
    with reader(db) as con:
        for model in MODELS:
            rows = con.execute("""
                SELECT r.labels->>'nightly', k.run_id, g.phase, k.signature, k.source_hash
                FROM kernels k JOIN runs r USING (run_id) LEFT JOIN graphs g USING (run_id, graph_id)
                WHERE r.model = ? AND k.generated""", [model]).fetchall()
            kernels_of: dict[str, Counter] = {night: Counter() for night in truth["nights"]}
            for night, _, phase, signature, source_hash in rows:
                kernels_of[night][(phase, signature, source_hash)] += 1
            nights = sorted(kernels_of)
            expected = [(a, b, sum(kernels_of[a].values()), sum(kernels_of[b].values()))
                        for a, b in zip(nights, nights[1:], strict=False) if kernels_of[a] != kernels_of[b]]
            report = changes(con, model, "nightly", ("kernel_identity",))
            got = [(p.before_at, p.after_at, p.changes[0].before, p.changes[0].after) for p in report.points]
            assert got == expected, model
            assert all(p.changes[0].detail for p in report.points)
            found += len(got)
    assert found  # the releases do change some model's kernels


def test_iwh_changes_by_version_and_by_label(series):
    db, truth = series
    res = CliRunner().invoke(cli, ["changes", "--model", "transformer", "--series", "nightly", "--metric", "kernels",
                                   "--format", "json", "--db", db])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    kernels = truth["kernels"]
    assert [(r["before"], r["after"]) for r in rows] == (
        [("2026-01-03", "2026-01-04")] if kernels[("2.6.0", "transformer")] != kernels[("2.13", "transformer")] else [])
    # by compiler version: the nine runs of a model sort as releases (2.6.0 before 2.13), same points
    res = CliRunner().invoke(cli, ["changes", "--model", "transformer", "--metric", "kernels", "--format", "json",
                                   "--db", db])
    versions = {"2.6.0": "2.6.0", "2.13": "2.13.0", "2.14.1": "2.14.1"}
    expected = [(versions[a], versions[b]) for a, b in zip(RELEASES, RELEASES[1:], strict=False)
                if kernels[(a, "transformer")] != kernels[(b, "transformer")]]
    assert [(r["before"].split("+")[0], r["after"].split("+")[0]) for r in json.loads(res.stdout)] == expected
    assert expected  # 2.6.0 -> 2.13 changed the transformer's kernel count
    res = CliRunner().invoke(cli, ["changes", "--model", "nope", "--db", db])
    assert res.exit_code == 1 and "no run of model 'nope'" in res.output


def test_the_page_lists_change_points_and_opens_a_kernel_diff(series, monkeypatch):
    from streamlit.testing.v1 import AppTest

    db, _ = series
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(Path(__file__).parent.parent / "dashboards" / "app.py"), default_timeout=120).run()
    at.switch_page("sections/changes.py").run()
    at.selectbox(key="changes_model").select("transformer").run()
    at.selectbox(key="changes_series").select("nightly").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("series of 9 runs of transformer, ordered by nightly" in c.value.replace("\\", "") for c in at.caption)
    counts = {m.label: m.value for m in at.metric}
    assert int(counts["Changed"]) >= 1  # the layer norm kernel, side by side below
    assert len(at.code) >= 2


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> tuple[str, Path]:
    """The three CPU corpora as they are: one run of each model a release."""
    root = tmp_path_factory.mktemp("changes_releases")
    unpack_cpu_corpora(root)
    db = str(root / "wh.duckdb")
    ingest_paths([root], db)
    return db, root


def test_compile_failures_are_a_change_point(releases):
    """ca under 2.14.1 fails to compile three frames and runs them eagerly (their compilation_metrics
    carry a fail_type, counted here from the log); 2.6.0 and 2.13 fail none. The 2.14.1 run is a
    change point of failures and fallbacks, and of recompiles (4 recompile_reasons artifacts, of
    inspect.py's frames: every frame counts)."""
    db, root = releases
    logs = {v: next(root.glob(f"*/cpu-torch{v}/ca/trace")).glob("*.log") for v in RELEASES}
    failed = {v: sum('"fail_type": "' in line and '{"compilation_metrics": ' in line
                     for line in next(logs[v]).read_text().splitlines()) for v in RELEASES}
    assert failed == {"2.6.0": 0, "2.13": 0, "2.14.1": 3}
    res = CliRunner().invoke(cli, ["changes", "--model", "ca", "--format", "json", "--db", db])
    assert res.exit_code == 0, res.output
    rows = [r for r in json.loads(res.stdout) if r["after"].startswith("2.14.1")]
    by_metric = {r["metric"]: (r["before_value"], r["after_value"]) for r in rows}
    assert by_metric["failures"] == by_metric["fallbacks"] == ("0", str(failed["2.14.1"]))
    recompiles = sum(line.count('"name": "recompile_reasons"') for line in
                     next(next(root.glob("*/cpu-torch2.14.1/ca/trace")).glob("*.log")).read_text().splitlines())
    assert by_metric["recompiles"] == ("0", str(recompiles)) and recompiles == 4
    assert {r["series"] for r in rows} == {"ca [device=cpu]"}


def _seconds(spans: list[dict]) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in spans:
        out[s["name"]] = out.get(s["name"], 0.0) + (s["e"] - s["b"]) / 1e6
    return out


def test_phases_are_judged_on_repeats_and_fold_under_their_parent(tmp_path):
    """mobilenetv2_100 under the benchmark harness, three captures a release (harness-timm and its
    repeats): a phase's seconds are the median of three a side, judged at 30% and half a second; one
    that moved inside a phase that moved the same way is folded under it (the enclosing span read here
    from the spans' begin and end)."""
    import statistics
    import tarfile

    from tests.conftest import HARNESS_CAPTURES, HARNESS_REPEATS

    for archive in (HARNESS_CAPTURES, HARNESS_REPEATS):
        with tarfile.open(archive) as tf:
            tf.extractall(tmp_path, filter="data")
    runs = {v: [tmp_path / f"cpu-torch{v}" / part / "mobilenetv2_100" for part in ("performance", "performance-2",
                                                                                   "performance-3")]
            for v in ("2.13", "2.14.1")}
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([r for rs in runs.values() for r in rs], db)
    spans = {v: [chromium_spans(next((r / "trace").glob("*.log"))) for r in rs] for v, rs in runs.items()}
    median = {v: {name: statistics.median(_seconds(s).get(name, 0.0) for s in ss) for name in _seconds(ss[0])}
              for v, ss in spans.items()}
    moved = {ph for ph in median["2.13"].keys() & median["2.14.1"].keys()
             if abs(median["2.14.1"][ph] - median["2.13"][ph]) >= max(0.5, 0.3 * median["2.13"][ph])}
    assert moved

    def parent(name: str, ss: list[dict]) -> str | None:
        first = next(s for s in ss if s["name"] == name)
        around = [s for s in ss if s["thread"] == first["thread"] and s["b"] <= first["b"] and s["e"] >= first["e"]
                  and s is not first]
        return min(around, key=lambda s: s["e"] - s["b"])["name"] if around else None

    up = {ph: parent(ph, spans["2.14.1"][0]) for ph in moved}
    direction = {ph: median["2.14.1"][ph] > median["2.13"][ph] for ph in moved}
    tops = {ph for ph in moved if not (up[ph] in moved and direction[up[ph]] == direction[ph])}
    with reader(db) as con:
        report = changes(con, "mobilenetv2_100", metrics=("compile_phase",))
    (point,) = report.points
    got = {c.detail.split(":")[0]: c for c in point.changes}
    assert set(got) == tops and all(c.judged and "(median of 3 and 3 runs)" in c.detail for c in got.values())
    for ph, c in got.items():
        assert (c.before, c.after) == (pytest.approx(median["2.13"][ph], abs=1e-6),
                                       pytest.approx(median["2.14.1"][ph], abs=1e-6))
    folded = {name for c in got.values() if "nested phase" in c.detail
              for name in c.detail.split("nested phase")[1].split(": ", 1)[1].split(", ")}
    assert folded == moved - tops and folded  # CacheBase.get_system.triton_key runs inside GraphLowering.run


def test_a_change_point_names_the_commits_between_the_builds(releases):
    """Each corpus run's manifest records its torch build's git hash (`git`): a change point between two
    releases names that range and GitHub's compare URL of it."""
    db, root = releases
    git = {json.loads(m.read_text())["torch"]: json.loads(m.read_text())["git"]
           for m in root.glob("*/cpu-torch*/transformer/manifest.json")}
    assert len(set(git.values())) == 3
    with reader(db) as con:
        report = changes(con, "transformer")
    assert report.points
    for p in report.points:
        b, a = git[p.before_at], git[p.after_at]
        assert p.commits == f"{b[:12]}...{a[:12]}"
        assert p.compare_url == f"https://github.com/pytorch/pytorch/compare/{b}...{a}"
    res = CliRunner().invoke(cli, ["changes", "--model", "transformer", "--format", "csv", "--db", db])
    assert res.exit_code == 0 and "https://github.com/pytorch/pytorch/compare/" in res.stdout


def test_runs_of_one_label_value_are_samples_of_one_point(tmp_path):
    """With --series LABEL a point is a value of the label: group A holds the 2.6.0 and 2.13 runs of
    ca, group B the 2.13 and 2.14.1 ones. Nothing changes inside a group (no "B -> B"
    point), and the one step A -> B says what `iwh compare` says of the two sides: each side's
    kernel count its lower median (counted here from output_code.py), the same in both commands."""
    from inductor_warehouse.analysis.compare import compare

    corpora = {next(p.glob("cpu-torch*")).name.removeprefix("cpu-torch"): next(p.glob("cpu-torch*"))
               for p in unpack_cpu_corpora(tmp_path / "corpora")}
    counted = {}
    for group, releases in (("A", ("2.6.0", "2.13")), ("B", ("2.13", "2.14.1"))):
        for release in releases:
            dest = tmp_path / "groups" / f"{group}-{release}" / "ca"
            shutil.copytree(corpora[release] / "ca", dest)
            manifest = json.loads((dest / "manifest.json").read_text())
            (dest / "manifest.json").write_text(json.dumps(manifest | {"grp": group}))
            counted[(group, release)] = sum(len(KERNEL_DEF.findall(p.read_text())) for p in dest.rglob("output_code.py"))
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths([tmp_path / "groups"], db).runs == 4
    lower_median = {g: sorted(n for (grp, _), n in counted.items() if grp == g)[0] for g in ("A", "B")}
    with reader(db) as con:
        report = changes(con, "ca", "grp")
        result = compare(con, "grp=A", "grp=B", model="ca")
    assert {p.before_at + p.after_at for p in report.points} <= {"AB"}
    kernels = [(c.before, c.after) for p in report.points for c in p.changes if c.metric == "kernels"]
    [pair] = result.pairs
    want = (lower_median["A"], lower_median["B"])
    assert (pair.metrics["kernels"].base, pair.metrics["kernels"].head) == want
    assert want[0] != want[1] and kernels == [want]
    # every structural change of the step is compare's move of that metric
    for p in report.points:
        for c in p.changes:
            if c.metric in pair.metrics:
                assert (c.before, c.after) == (pair.metrics[c.metric].base, pair.metrics[c.metric].head), c.metric
    assert all(report.point_counts[key] == 2 for key in report.series)
