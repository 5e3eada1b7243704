"""The default decision's family-wise false claims after the fix of §4c.10 (a family holding a
calibrated test is adjusted by single-step Bonferroni), on the decision benchmark's designs:
k5 and k10 identical systems and rank1 (5 systems spaced by 1 run-mean SD) for power; each
experiment decided once by ``decide`` with the defaults (``infrepro/validation/decision.py``).

Usage: python benchmarks/decision_bonferroni.py [--k5 400] [--k10 300] [--rank1 200]
       [--records /tmp/bonferroni.jsonl]
Prints the rates with exact 95 % intervals (the numbers of ``decision_level.md``'s last section).
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import sys
from pathlib import Path

from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from calibration import truth_of  # noqa: E402

from infrepro.validation.calibration import clopper_pearson  # noqa: E402
from infrepro.validation.decision import decision_designs, decision_outcomes  # noqa: E402


def one(job: tuple[str, int]) -> tuple[str, int, dict | None]:
    key, i = job
    design = decision_designs()[key]
    with threadpool_limits(limits=1):
        data = design.experiment(i)
        return key, i, decision_outcomes(data, truth_of(design), design.seed + i, "max-t")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k5", type=int, default=400)
    parser.add_argument("--k10", type=int, default=300)
    parser.add_argument("--rank1", type=int, default=200)
    parser.add_argument("--records", type=Path, default=Path("/tmp/bonferroni.jsonl"))
    args = parser.parse_args()
    done = set()
    if args.records.is_file():
        done = {(r["scenario"], r["i"]) for r in map(json.loads, args.records.open())}
    jobs = [
        (key, i)
        for key, n in (("k5", args.k5), ("k10", args.k10), ("rank1", args.rank1))
        for i in range(n)
        if (key, i) not in done
    ]
    with args.records.open("a") as sink, multiprocessing.Pool(2) as pool:
        for key, i, out in pool.imap_unordered(one, jobs, chunksize=2):
            sink.write(json.dumps({"scenario": key, "i": i, "out": out}) + "\n")
            sink.flush()
    by = collections.defaultdict(list)
    for row in map(json.loads, args.records.open()):
        if row["out"]:
            by[row["scenario"]].append(row["out"])
    for key, rows in by.items():
        for family in ("baseline", "all_pairs"):
            false = sum(o[f"fwer_{family}"] for o in rows)
            low, high = clopper_pearson(false, len(rows))
            right = sum(o[f"power_{family}"] for o in rows)
            true = sum(o[f"true_{family}"] for o in rows)
            power = f", power {right / true:.3f}" if true else ""
            print(
                f"{key} {family}: {len(rows)} experiments, any false claim "
                f"{false / len(rows):.3f} [{low:.3f}, {high:.3f}]{power}"
            )


if __name__ == "__main__":
    main()
