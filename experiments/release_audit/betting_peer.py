"""Does the audit's bound over fits agree with its authors' code? (issue 44, item 3).

``risk.audit.fit_interval`` (:mod:`risk._audit_bound`) bounds the mean of the test fits' hit
shares by betting (Waudby-Smith & Ramdas, JRSS-B 2024). Their package ``confseq`` (https://github.com/gostevehoward/confseq,
PyPI ``confseq``) holds the reference ``confseq.betting.betting_ci``: the same predictable
plug-in bets for a fixed sample size, truncated at 1, with the running intersection, on a grid
of 1,000 widened by one step. Its compiled part does not build here, but the betting code is
pure Python: point ``--confseq`` at the unpacked source's ``src`` folder (``pip download
--no-deps confseq==0.0.11``; it needs ``multiprocess``) and this prints, over random sets of fit
shares like the audit's (no leak, independent copies, all or nothing by fit), both intervals
and the largest difference, which should be within the peer's grid step (0.001, plus its
widening step).

    python -m experiments.release_audit.betting_peer --confseq /tmp/confseq-0.0.11/src
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from risk.audit import fit_interval


def cases(seed: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, hits, runs) per test fit, as an audit of 40 targets x 300 shadows makes them."""
    rng = np.random.default_rng(seed)
    out = []
    for name, q in (("no leak", 0.0), ("copies 5 %", 0.05), ("all or nothing 20 %", 0.2)):
        for n in (20, 50, 150):
            runs = np.maximum(rng.binomial(40, 0.5, n), 1).astype(float)
            if name.startswith("all"):
                leak = rng.random(n) < q
                hits = np.where(leak, runs, rng.binomial(runs.astype(int), 0.01)).astype(float)
            else:
                hits = rng.binomial(runs.astype(int), 0.01 + q).astype(float)
            out.append((f"{name}, {n} fits", hits, runs))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--confseq", required=True, help="the peer's source folder (src/)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sys.path.insert(0, args.confseq)
    if not hasattr(np, "float_"):  # confseq 0.0.11's annotations name NumPy 1's alias
        np.float_ = np.float64  # type: ignore[attr-defined]
    from confseq.betting import betting_ci  # the peer, from its source

    worst = 0.0
    print("| case | ours (95 %) | confseq.betting.betting_ci (95 %) | largest difference |")
    print("|---|---|---|---|")
    for name, hits, runs in cases(args.seed):
        ours = fit_interval(hits, runs, 0.95)
        low, high = betting_ci(hits / runs, alpha=0.05)
        diff = max(abs(ours.low - low), abs(ours.high - high))
        worst = max(worst, diff)
        print(f"| {name} | [{ours.low:.4f}, {ours.high:.4f}] | [{low:.4f}, {high:.4f}] | "
              f"{diff:.4f} |")
    print(f"\nlargest difference: {worst:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
