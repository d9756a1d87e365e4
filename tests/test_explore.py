"""`kata explore`: the page of a loop's decision boundary and losses beside the reference's, and `kata run --plot`'s
boundary.

The explorer's setting is checked against a loop written here from its description alone (180 moons, 120/60,
an MLP 2-8-2, SGD, batches of 16); the pages are opened in headless Chromium, which reads a fragment
(``#epoch=5&lr=10``) and moves the slider as a learner would, and the DOM it leaves is compared with the figures
the page holds.
"""

from __future__ import annotations

import base64
import json
import re
import shutil

import pytest
import torch
from click.testing import CliRunner
from sklearn.datasets import make_moons
from sklearn.model_selection import train_test_split
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from checker.cli import main
from checker.runs.boundary import GRID, BadFigures, class_share, decode_cells, frame_bytes
from tests.conftest import REFERENCE, ROOT

DATA = re.compile(r"<script type='application/json' id='kata-data'>(.*?)</script>", re.S)


def page_data(html: str) -> dict:
    return json.loads(DATA.search(html).group(1))


def cells(b64: str) -> bytes:
    return base64.b64decode(b64)


def explorer_history(lr: float, epochs: int = 40):
    """The explorer's training, written from its description alone: (rows, steps per epoch, the trained net, the
    grid's bounds)."""
    X, y = make_moons(n_samples=180, noise=0.2, random_state=0)
    Xtr, Xva, ytr, yva = train_test_split(X, y, test_size=60, random_state=0, stratify=y)
    Xtr, Xva = torch.tensor(Xtr, dtype=torch.float32), torch.tensor(Xva, dtype=torch.float32)
    ytr, yva = torch.tensor(ytr, dtype=torch.int64), torch.tensor(yva, dtype=torch.int64)
    loader = DataLoader(TensorDataset(Xtr, ytr), batch_size=16, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    rows, steps = [], []
    for _ in range(epochs):
        net.train()
        total, seen, n = 0.0, 0, 0
        for xb, yb in loader:
            opt.zero_grad()
            loss = criterion(net(xb), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(yb)
            seen += len(yb)
            n += 1
        steps.append(n)
        net.eval()
        with torch.no_grad():
            out = net(Xva)
            rows.append((total / seen, criterion(out, yva).item(), (out.argmax(1) == yva).float().mean().item()))
    both = torch.cat([Xtr, Xva])
    lo, hi = both.min(0).values, both.max(0).values
    return rows, steps, net, (lo[0].item() - 0.5, hi[0].item() + 0.5, lo[1].item() - 0.5, hi[1].item() + 0.5)


@pytest.fixture(scope="module")
def pages(tmp_path_factory, lab):
    """A starter from `kata next` (falls-then-rises: no zero_grad) explored as a learner would (no PATH), then the
    same file fixed (the reference's loop) explored again: the first page is replaced by the second."""
    work = tmp_path_factory.mktemp("work")
    runner = CliRunner()
    opened = runner.invoke(main, ["--dir", str(work), "next", "falls-then-rises"])
    assert opened.exit_code == 0, opened.output
    starter = work / "falls-then-rises.py"
    page = work / "falls-then-rises.explore.html"
    first = runner.invoke(main, ["--dir", str(work), "explore"])
    assert first.exit_code == 0, first.output
    broken = work / "broken.html"
    shutil.copy(page, broken)
    starter.write_text(REFERENCE.read_text())
    second = runner.invoke(main, ["--dir", str(work), "explore"])
    assert second.exit_code == 0, second.output
    return {"broken": broken, "fixed": page, "first": first.output, "second": second.output}


def test_the_page_is_self_contained_and_holds_both_loops_at_every_lr(pages):
    html = pages["broken"].read_text()
    assert '<meta name="generator" content="kata explore">' in html
    assert not re.search(r"(src|href)\s*=|https?://|@import|fetch\(|XMLHttpRequest", html)  # nothing fetched
    data = page_data(html)
    assert [lp["role"] for lp in data["loops"]] == ["mine", "reference"]
    assert data["lrs"] == ["0.01", "0.03", "0.1", "0.3", "1", "3", "10"] and data["default_lr"] == "0.3"
    assert data["grid"] == GRID and data["classes"] == 2
    for lp in data["loops"]:
        assert set(lp["runs"]) == set(data["lrs"]) and not lp["errors"]
        for run in lp["runs"].values():
            assert len(run["history"]) == 40 and len(run["frames"]) == 41 and run["per_epoch"]
            assert len(run["points"]["train_x"]) == 120 and len(run["points"]["val_x"]) == 60
            assert all(len(cells(f)) == GRID * GRID for f in run["frames"])
    assert "page written to" in pages["first"] and "replacing the page written before" in pages["second"]
    assert "trains exactly as the reference" not in pages["first"]
    assert "trains exactly as the reference" in pages["second"] and "--track moons" in pages["second"]


def test_the_reference_in_the_explorer_setting_matches_the_description_number_for_number(pages):
    data = page_data(pages["fixed"].read_text())
    rows, steps, net, bounds = explorer_history(0.3)
    assert steps == [8] * 40  # 7 batches of 16 and one of 8
    for lp in data["loops"]:  # the fixed file and the reference alike
        got = lp["runs"]["0.3"]["history"]
        for (epoch, train, val, acc), (w_train, w_val, w_acc) in zip(got, rows, strict=True):
            assert (round(train, 3), round(val, 3), round(acc, 3)) == (round(w_train, 3), round(w_val, 3),
                                                                       round(w_acc, 3)), epoch
    assert data["bounds"] == pytest.approx(bounds, abs=1e-3)
    # the last frame is the trained net's argmax over the grid, row by row from the top
    x0, x1, y0, y1 = data["bounds"]
    xs = torch.tensor([x0 + (i + 0.5) * (x1 - x0) / GRID for i in range(GRID)])
    ys = torch.tensor([y1 - (j + 0.5) * (y1 - y0) / GRID for j in range(GRID)])
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    with torch.no_grad():
        want = net(torch.stack([gx.reshape(-1), gy.reshape(-1)], 1)).argmax(1).tolist()
    got = [c[0] for c in decode_cells(cells(data["loops"][1]["runs"]["0.3"]["frames"][-1]), 2)]
    assert sum(a == b for a, b in zip(got, want, strict=True)) >= 0.995 * GRID * GRID
    assert 0.2 < sum(want) / len(want) < 0.8  # a real boundary crosses the grid


def test_the_starter_and_its_fix_show_both_boundaries(pages):
    broken, fixed = page_data(pages["broken"].read_text()), page_data(pages["fixed"].read_text())
    mine, ref = broken["loops"][0]["runs"]["0.3"], broken["loops"][1]["runs"]["0.3"]
    assert mine["history"] != ref["history"] and mine["frames"][-1] != ref["frames"][-1]
    assert mine["frames"][0] == ref["frames"][0]  # the same model before the first step
    assert mine["history"][-1][1] > ref["history"][-1][1] + 0.1  # no zero_grad: a worse training loss
    fixed_mine, fixed_ref = fixed["loops"][0]["runs"], fixed["loops"][1]["runs"]
    assert fixed_mine == fixed_ref  # the fix trains exactly as the reference, at every lr
    assert ref == fixed_ref["0.3"]


def needs_chromium():
    from benchmarks.screenshot_html import find_chromium

    if find_chromium() is None:
        pytest.skip("Chromium is not installed (.ci/run installs it with apt-get where it can)")


def panels(dom: str) -> dict[str, dict[str, str]]:
    found = {}
    for tag in re.findall(r"<section [^>]*class=\"panel\"[^>]*>", dom):
        attrs = dict(re.findall(r'([a-z-]+)="([^"]*)"', tag))
        found[attrs["id"]] = attrs
    return found


def test_the_browser_moves_the_slider_from_the_fragment_and_draws_each_frame(pages):
    needs_chromium()
    from benchmarks.screenshot_html import dump_dom

    data = page_data(pages["broken"].read_text())
    for fragment, epoch, lr in (("epoch=5&lr=10", 5, "10"), ("epoch=0&lr=0.3", 0, "0.3"), ("lr=1", 40, "1")):
        dom = dump_dom(pages["broken"], fragment)
        assert 'data-ready="1"' in dom
        shown = panels(dom)
        assert set(shown) == {"mine", "reference"}
        for lp in data["loops"]:
            attrs, run = shown[lp["role"]], lp["runs"][lr]
            assert (attrs["data-epoch"], attrs["data-lr"], attrs["data-state"]) == (str(epoch), lr, "run")
            frame = frame_bytes(run["frames"][epoch], 2)
            assert attrs["data-share"] == f"{class_share(frame, 2):.4f}", (fragment, lp["role"])
            want_loss = "" if epoch == 0 else f"{run['history'][epoch - 1][1]:.4f}"
            assert attrs["data-train-loss"] == want_loss
            assert int(attrs["data-painted"]) > 0.9 * 360 * 360  # the boundary fills the canvas
    # Play advances the slider by itself (virtual time lets its timer fire), frame after frame
    played = panels(dump_dom(pages["broken"], "epoch=0&lr=0.3&play", budget_ms=1500))
    epoch = int(played["mine"]["data-epoch"])
    assert 0 < epoch < 40 and played["reference"]["data-epoch"] == str(epoch)
    run = data["loops"][0]["runs"]["0.3"]
    assert played["mine"]["data-share"] == f"{class_share(frame_bytes(run['frames'][epoch], 2), 2):.4f}"
    # at lr 10 the broken loop and the reference part: different frames, different shares
    far = panels(dump_dom(pages["broken"], "epoch=5&lr=10"))
    assert far["mine"]["data-share"] != far["reference"]["data-share"]


def test_the_page_renders_in_a_browser(pages, tmp_path):
    needs_chromium()
    from benchmarks.screenshot_html import screenshot

    png = screenshot(pages["broken"], tmp_path / "explore.png", width=900, height=900)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")) == (900, 900)
    assert len(data) > 60_000  # two painted boundaries and curves; a blank page compresses to far less


def test_a_file_that_cannot_be_loaded_exits_2_and_writes_no_page(tmp_path, lab):
    bad = tmp_path / "bad.py"
    bad.write_text(REFERENCE.read_text().replace("def fit(", "def fit_renamed("))
    result = CliRunner().invoke(main, ["explore", str(bad)])
    assert result.exit_code == 2, result.output
    assert "fit" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "bad.explore.html").exists()


def test_a_loop_that_raises_gets_the_reference_alone_with_its_error(tmp_path, lab):
    """Raising at lr 10 only: the other lrs show both loops; a fit that always raises: the reference alone,
    and the terminal says why."""
    source = REFERENCE.read_text()
    picky = tmp_path / "picky.py"
    picky.write_text(source.replace(
        "    model.train()\n    total_loss, n_seen = 0.0, 0\n",
        "    model.train()\n    if optimizer.param_groups[0]['lr'] > 5:\n"
        "        raise ValueError('lr too large for this loop')\n    total_loss, n_seen = 0.0, 0\n"))
    crash = tmp_path / "crash.py"
    crash.write_text(source.replace("    history = []\n", "    history = []\n    1 / 0\n"))
    runner = CliRunner()
    result = runner.invoke(main, ["explore", str(picky)])
    assert result.exit_code == 0, result.output
    mine = page_data((tmp_path / "picky.explore.html").read_text())["loops"][0]
    assert set(mine["errors"]) == {"10"} and "lr too large for this loop" in mine["errors"]["10"]
    assert len(mine["runs"]) == 6
    result = runner.invoke(main, ["explore", str(crash), "-o", str(tmp_path / "crash.html")])
    assert result.exit_code == 0, result.output
    assert "your loop gave no run at lr 0.3" in result.output and "ZeroDivisionError" in result.output
    data = page_data((tmp_path / "crash.html").read_text())
    assert data["loops"][0]["runs"] == {} and len(data["loops"][0]["errors"]) == 7
    assert len(data["loops"][1]["runs"]) == 7
    from benchmarks.screenshot_html import find_chromium

    if find_chromium() is not None:
        from benchmarks.screenshot_html import dump_dom

        dom = dump_dom(tmp_path / "picky.explore.html", "epoch=3&lr=10")
        shown = panels(dom)
        assert shown["mine"]["data-state"] == "error" and shown["reference"]["data-state"] == "run"
        assert "lr too large for this loop" in dom


def test_nothing_but_an_earlier_page_is_written_over(tmp_path, lab):
    mine = tmp_path / "notes.html"
    mine.write_text("<p>my notes</p>")
    result = CliRunner().invoke(main, ["--lang", "es", "explore", str(REFERENCE), "-o", str(mine)])
    assert result.exit_code == 2, result.output
    assert "no es una página de kata explore" in result.output
    assert mine.read_text() == "<p>my notes</p>"


def test_a_track_of_three_classes_colours_three_classes(tmp_path, lab):
    out = tmp_path / "three.html"
    result = CliRunner().invoke(main, ["explore", str(ROOT / "solutions" / "three-classes" / "loop.py"),
                                       "--track", "three-classes", "--lang", "es", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "página escrita en" in result.output
    html = out.read_text()
    assert "<html lang='es'>" in html and "Tu bucle" in html and "recorrido three-classes" in html
    data = page_data(html)
    assert data["classes"] == 3 and data["default_lr"] == "0.1"
    run = data["loops"][0]["runs"]["0.1"]
    assert len(run["history"]) == 50 and len(run["points"]["train_x"]) == 240
    last = decode_cells(cells(run["frames"][-1]), 3)
    assert {c[0] for c in last if c is not None} == {0, 1, 2}


def test_run_plot_draws_each_runs_boundary(tmp_path, lab, reference_source):
    from checker.runs.training import RunSettings, run_files

    broken = reference_source.replace("        optimizer.zero_grad()\n", "")
    results = run_files([(reference_source, "ref.py"), (broken, "broken.py")],
                        RunSettings(epochs=10, boundary=True), lab)
    ref, bad = results[0].boundary, results[1].boundary
    assert ref is not None and bad is not None and ref.classes == 2
    assert len(ref.points.train_x) == 150 and len(ref.points.val_x) == 50
    assert ref.cells != bad.cells and 0.2 < class_share(ref.cells, 2) < 0.8
    assert run_files([(reference_source, "ref.py")], RunSettings(epochs=1), lab)[0].boundary is None
    png = tmp_path / "p.png"
    result = CliRunner().invoke(main, ["run", str(REFERENCE), "--epochs", "3", "--plot", str(png)])
    assert result.exit_code == 0, result.output
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(data[16:20], "big") > 1000  # curves + a boundary


# ------------------------------------------------------------------------------ the parent's checks


def good_figures() -> dict:
    frame = base64.b64encode(bytes([0, 126, 127, 253, 255] * (GRID * GRID // 5))).decode()
    return {"lr": 0.3, "history": [{"epoch": 1, "lr": 0.3, "train_loss": 0.5, "val_loss": float("nan"),
                                    "val_acc": 0.5, "extra": "x"}],
            "warnings": [], "frames": [frame, frame], "per_epoch": True,
            "points": {"train_x": [[0.0, 1.0]], "train_y": [1], "val_x": [], "val_y": []},
            "bounds": [-1.0, 2.0, -1.0, 1.5], "classes": 2}


@pytest.mark.parametrize("change", [
    lambda f: f.update(extra=1),
    lambda f: f.update(lr=0.2),
    lambda f: f.update(lr=True),
    lambda f: f.update(classes=3),
    lambda f: f.update(frames=["not base64!"]),
    lambda f: f.update(frames=[base64.b64encode(b"\x00" * 10).decode()]),
    lambda f: f.update(frames=[base64.b64encode(bytes([254]) * GRID * GRID).decode()]),
    lambda f: f.update(frames=[]),
    lambda f: f.update(frames=[7]),
    lambda f: f.update(bounds=[0, float("nan"), 0, 1]),
    lambda f: f.update(bounds=[1, 0, 0, 1]),
    lambda f: f.update(points={"train_x": [[0, 1, 2]], "train_y": [1], "val_x": [], "val_y": []}),
    lambda f: f.update(points={"train_x": [[0, 1]], "train_y": [], "val_x": [], "val_y": []}),
    lambda f: f.update(points={"train_x": [[0, float("inf")]], "train_y": [0], "val_x": [], "val_y": []}),
    lambda f: f.update(history=[{"epoch": 1}] * 200),
    lambda f: f.update(history={"epoch": 1}),
    lambda f: f.update(per_epoch=1),
    lambda f: f.update(warnings=["w"] * 10),
], ids=lambda _: "")
def test_the_parent_refuses_malformed_figures(change):
    from checker.runs.explore import EXPLORER, parse_run

    run = parse_run(good_figures(), EXPLORER)
    assert run.history[0]["val_loss"] != run.history[0]["val_loss"]  # NaN stays a measurement
    assert "extra" not in run.history[0] and len(run.frames) == 2
    bad = good_figures()
    change(bad)
    with pytest.raises(BadFigures):
        parse_run(bad, EXPLORER)


def test_a_malformed_or_tampering_child_costs_its_own_loop_only():
    from types import SimpleNamespace

    from checker.runs.explore import EXPLORER, _collect
    from checker.sandbox.events import Figures, Raised, Tampered

    def outcome(*events, timed_out=None):
        return SimpleNamespace(events=list(events), timed_out_step=timed_out, exit_status=0)

    good = Figures(good_figures())
    found = _collect(outcome(good, Raised("lr=10", "ValueError", "boom")), "a.py", EXPLORER)
    assert list(found.runs) == [0.3] and found.errors[10.0] == "boom"  # the loop's own error, as it is
    assert "ended early" in found.errors[0.01].en and "antes de tiempo" in found.errors[0.01].es
    bad = good_figures()
    bad["frames"] = ["!!"]
    found = _collect(outcome(good, Figures(bad)), "a.py", EXPLORER)
    assert not found.runs and "refused" in found.error().en
    found = _collect(outcome(good, Tampered(("patched torch",))), "a.py", EXPLORER)
    assert not found.runs and "patched torch" in found.error().render("es")
    found = _collect(outcome(good, timed_out="lr=1"), "a.py", EXPLORER)
    assert "did not finish within" in found.errors[1.0].en and "not run" in found.errors[3.0].en
    assert found.errors[0.01].en == found.errors[3.0].en


def test_without_a_path_the_current_katas_file_or_a_clear_no(tmp_path, lab):
    from checker.catalogue.katas import load_katas

    practice_kata = next(k for k in load_katas() if k.practice is not None)
    runner = CliRunner()
    work = tmp_path / "w"
    work.mkdir()
    none = runner.invoke(main, ["--dir", str(work), "explore"])
    assert none.exit_code == 2 and "Traceback" not in none.output
    assert runner.invoke(main, ["--dir", str(work), "next", practice_kata.slug]).exit_code == 0
    practice = runner.invoke(main, ["--dir", str(work), "--lang", "es", "explore"])
    assert practice.exit_code == 2 and "kata de práctica" in practice.output
    assert runner.invoke(main, ["--dir", str(work), "next", "falls-then-rises", "--skip"]).exit_code == 0
    (work / "falls-then-rises.py").unlink()
    missing = runner.invoke(main, ["--dir", str(work), "explore"])
    assert missing.exit_code == 2 and "falls-then-rises.py is missing" in missing.output
    assert not list(work.glob("*.html"))
