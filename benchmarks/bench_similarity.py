"""The similarity step of `kata grade` on two colluding long submissions, against the floor of reading them.

A class of ``--class-size`` files from the reference, plus two colluding files of ``--lines`` lines each (the
issue's attack: 12,000 lines added 90 s to a class of 5 when every pair was compared line by line). Each round
times ``similar_pairs`` on the class and, as the baseline in the same run, tokenizing every file once
(``token_stream``: the floor any comparison of token streams pays). The report gives the medians and their
ratio; a ratio that stays small as ``--lines`` grows says the step grows with the files' length, not with the
product of two lengths. Run:

    python benchmarks/bench_similarity.py [--lines 12000] [-n 5]

Results go to benchmarks/results/similarity.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sources(lines: int, size: int) -> dict[str, str]:
    """``size`` files from the reference (each a comment apart) and two colluding ``lines``-line files."""
    reference = (ROOT / "solutions" / "loop.py").read_text()
    body = "\n".join(f"def helper_{i}(x):\n    y = x * {i} + {i % 7}\n    return y - {i}"
                     for i in range(lines // 3))
    files = {f"student{i}.py": f"# student {i}\n{reference}" for i in range(size)}
    files["colluder_a.py"] = reference + body
    files["colluder_b.py"] = "# mine\n" + reference + body.replace("    ", "  ")
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=12_000)
    parser.add_argument("--class-size", type=int, default=5)
    parser.add_argument("-n", type=int, default=5, help="rounds")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from checker.gradebook.similarity import similar_pairs, token_stream

    files = sources(args.lines, args.class_size)
    floor, step = [], []
    for _ in range(args.n):
        start = time.perf_counter()
        for text in files.values():
            token_stream(text)
        floor.append(time.perf_counter() - start)
        start = time.perf_counter()
        pairs = similar_pairs(files)
        step.append(time.perf_counter() - start)
    top = pairs[0]
    result = {"lines": args.lines, "class_size": args.class_size, "rounds": args.n,
              "tokenize_median_s": statistics.median(floor), "similar_pairs_median_s": statistics.median(step),
              "ratio": statistics.median(step) / statistics.median(floor), "top_pair": [top.first, top.second]}
    print(f"tokenize every file once: {result['tokenize_median_s']:.2f} s; similar_pairs: "
          f"{result['similar_pairs_median_s']:.2f} s; ratio {result['ratio']:.2f}x; top pair {top.first}, "
          f"{top.second} ({top.similarity:.3f})")
    out = ROOT / "benchmarks" / "results" / "similarity.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
