"""Write the constructed capture corpus into captures/ (deterministic: same bytes every run).

    python scripts/build_captures.py [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from corpus import build_all  # scripts/ is on the path when this file runs

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "captures")
    args = parser.parse_args(argv)
    paths = build_all(args.out)
    print(f"wrote {len(paths)} captures under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
