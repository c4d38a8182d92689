#!/usr/bin/env python3
"""plot-bench.py — bar charts of socket-bench client runs, one bar per label.

Needs matplotlib: `pip install matplotlib`.

Usage: plot-bench.py RUNS [RUNS ...] [-o bench.png]

Each RUNS file is either a CSV written by `socket-bench client ... --csv FILE`, or a text file of
`RESULT key=value ...` lines (socket-bench client, shared/bench/loadgen, run-peers.sh results). Runs with
the same label and mode (run-peers' repetitions, "peer/scenario/N", count as one label) show their
median; runs with errors or mismatches are left out. One row per mode: messages/s, MB/s and p99 latency (µs).
"""
import argparse
import re
import csv
import statistics
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_runs(path):
    try:
        with open(path, newline="") as f:
            text = f.read()
    except OSError as error:
        raise SystemExit(f"plot-bench.py: cannot read {path}: {error.strerror}")
    if "RESULT " in text:
        return [dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
                for line in text.splitlines() if line.startswith("RESULT ")]
    return list(csv.DictReader(text.splitlines()))


def peer_of(run):
    """The label without run-peers' "/scenario/repetition" suffix, so repetitions share a bar."""
    label = re.sub(r"/\d+$", "", run.get("label", "-"))
    return label.removesuffix("/" + run.get("mode", ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("-o", "--output", default="bench.png")
    args = parser.parse_args()
    modes = OrderedDict()  # mode -> label -> [run]
    for path in args.files:
        for run in read_runs(path):
            if "error" in run or float(run.get("errors", 0) or 0) or float(run.get("mismatches", 0) or 0):
                continue
            modes.setdefault(run.get("mode", "?"), OrderedDict()).setdefault(peer_of(run), []).append(run)
    if not modes:
        raise SystemExit("no runs found")
    metrics = [("msgs_per_s", "messages/s"), ("mb_per_s", "MB/s echoed"), ("p99_us", "p99 latency (µs)")]
    rows = max(len(labels) for labels in modes.values())
    fig, axes = plt.subplots(len(modes), len(metrics), squeeze=False,
                             figsize=(6 * len(metrics), len(modes) * (1.2 + 0.4 * rows)))
    for row, (mode, groups) in zip(axes, modes.items()):
        names = list(groups)
        for ax, (key, title) in zip(row, metrics):
            values = [statistics.median(float(r.get(key, "nan") or "nan") for r in groups[n]) for n in names]
            bars = ax.barh(names, values, color="tab:blue")
            ax.bar_label(bars, labels=[f"{v:,.0f}" if v >= 100 else f"{v:.2f}" for v in values], fontsize=8)
            ax.set_title(f"{mode}: {title}")
            ax.invert_yaxis()
        for ax in row[1:]:
            ax.set_yticklabels([])
    fig.tight_layout()
    fig.savefig(args.output, dpi=100)
    print(f"wrote {args.output} ({len(modes)} modes)")


if __name__ == "__main__":
    main()
