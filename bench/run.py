"""``make bench``: every benchmark, ratios against the official SDKs side by side.

Each bench module exposes ``run(quick) -> rows`` and ``main(quick)`` (which
prints its table). The rows of one run are written to
``bench/results.json`` so that notebooks can quote the committed figures
instead of timing anything in a cell.

    python bench/run.py [--quick] [--only sse,eventstream,accumulate,partial_json,scaling,turn,
                             turn_wires,draw,live]
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHES = ("sse", "eventstream", "accumulate", "partial_json", "scaling", "turn", "turn_wires",
           "draw", "live")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    parser.add_argument("--only", default=",".join(BENCHES))
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    results: dict[str, list[dict]] = {}
    if args.out.exists():
        results = json.loads(args.out.read_text()).get("benches", {})
    for name in args.only.split(","):
        try:
            module = importlib.import_module(f"bench_{name}")
        except ModuleNotFoundError as exc:
            print(f"[{name}] skipped: {exc}")
            continue
        print()
        results[name] = module.main(quick=args.quick)
    if not args.quick:
        meta = {"python": platform.python_version(), "machine": platform.machine()}
        args.out.write_text(json.dumps({"meta": meta, "benches": results}, indent=1) + "\n")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
