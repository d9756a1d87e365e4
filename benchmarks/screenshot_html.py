"""Screenshot `kata mutants verify --html` (or any page) with headless Chromium, to see that the page renders;
``dump_dom`` gives a page's DOM after its scripts ran (the browser tests of `kata explore`).

    python benchmarks/screenshot_html.py REPORT.html [OUT.png] [--width 1400] [--height 2000]

Without REPORT.html it runs `kata mutants verify --html` first (a full verify: about a minute).
Chromium runs with no network, no GPU and a throw-away profile. Writes the PNG (default:
benchmarks/results/verify.png) and prints its path; exit 2 when Chromium is not installed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(html: Path, png: Path, width: int = 1400, height: int = 2000, timeout: float = 120.0) -> Path:
    """Render ``html`` in headless Chromium and write ``png``; raises RuntimeError when it cannot."""
    browser = find_chromium()
    if browser is None:
        raise RuntimeError("no Chromium found (apt-get install -y chromium)")
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kata-chromium-") as profile:
        cmd = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--screenshot={png}",
            html.resolve().as_uri(),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not png.exists() or png.stat().st_size == 0:
        raise RuntimeError(f"chromium failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return png


def dump_dom(html: Path, fragment: str = "", timeout: float = 120.0, budget_ms: int = 2000) -> str:
    """The DOM of ``html`` (opened with ``#fragment``) after its scripts ran, from headless Chromium.

    ``budget_ms`` of virtual time lets timers fire; raises RuntimeError when Chromium cannot run."""
    browser = find_chromium()
    if browser is None:
        raise RuntimeError("no Chromium found (apt-get install -y chromium)")
    url = html.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    with tempfile.TemporaryDirectory(prefix="kata-chromium-") as profile:
        cmd = [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--no-first-run", f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}", "--dump-dom", url,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or "<html" not in proc.stdout:
        raise RuntimeError(f"chromium failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", type=Path)
    parser.add_argument("png", nargs="?", type=Path, default=RESULTS / "verify.png")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=2000)
    args = parser.parse_args(argv)
    if find_chromium() is None:
        print("no Chromium found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    html = args.html
    if html is None:
        RESULTS.mkdir(parents=True, exist_ok=True)
        html = RESULTS / "verify.html"
        subprocess.run(
            [sys.executable, "-m", "checker", "mutants", "verify", "-q", "--html", str(html)],
            cwd=ROOT,
            check=False,
        )
    if not html.exists():
        print(f"{html}: no such file", file=sys.stderr)
        return 2
    print(screenshot(html, args.png, args.width, args.height))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
