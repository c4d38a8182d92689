#!/usr/bin/env python3
"""plot-1m.py — how the figures of scripts/bench-1m.sh grow with the connections (issue 35 §1).

Needs matplotlib (Debian: `apt-get install python3-matplotlib`, then run it with /usr/bin/python3).

Usage: plot-1m.py SUMMARY [SUMMARY ...] [-o idle-1m.png]

Each SUMMARY holds `RESULT bench=idle-1m …` lines (bench-1m.sh appends one per run); for each number of
connections the last run in which every connection connected counts for memory (a run whose
heartbeats were missed still held every socket), and the last clean run (0 missed, 0 dropped) for
CPU. Three panels against the connections: memory per connection (server and client RssAnon, kernel
slab per socket), total memory (GiB), and CPU per heartbeat (server and client processes, µs).
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def runs(paths, clean):
    by_size = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if not line.startswith("RESULT ") or "bench=idle-1m" not in line:
                    continue
                run = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
                if int(run["connected"]) != int(run["n"]):
                    continue
                if clean and (int(run["hb_missed"]) or int(run["errors"]) or int(run["alive"]) != int(run["n"])):
                    continue
                by_size[int(run["n"])] = {key: float(value) for key, value in run.items() if key != "bench"}
    return [by_size[n] for n in sorted(by_size)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("-o", "--output", default="idle-1m.png")
    args = parser.parse_args()
    data, clean = runs(args.files, clean=False), runs(args.files, clean=True)
    if not data:
        raise SystemExit("no runs found")
    n = [run["n"] for run in data]
    thousands = [x / 1000 for x in n]
    fig, (memory, total, cpu) = plt.subplots(1, 3, figsize=(17, 5))

    series = [("server_anon_b_per_conn", "server processes (RssAnon)"), ("client_anon_b_per_conn", "load generator (RssAnon)"),
              ("slab_b_per_socket", "kernel slab per socket"), ("tcp_slab_b_per_socket", "kernel TCP slab per socket")]
    for key, label in series:
        memory.plot(thousands, [run[key] for run in data], marker="o", label=label)
    memory.set_title("bytes per connection (per socket for the kernel)")
    memory.set_xlabel("idle connections (thousands)")
    memory.set_ylim(bottom=0)
    memory.legend(loc="upper right", bbox_to_anchor=(1, 0.86))

    gib = 1 << 30
    kernel = [2 * run["n"] * run["slab_b_per_socket"] / gib for run in data]
    server = [run["n"] * run["server_anon_b_per_conn"] / gib for run in data]
    client = [run["n"] * run["client_anon_b_per_conn"] / gib for run in data]
    total.stackplot(thousands, kernel, server, client, labels=["kernel slab (2 sockets a connection)", "server processes", "load generator"])
    total.set_title("memory held (GiB)")
    total.set_xlabel("idle connections (thousands)")
    total.legend(loc="upper left")

    for key, label in [("server_cpu_us_per_hb", "server processes"), ("client_cpu_us_per_hb", "load generator")]:
        cpu.plot([run["n"] / 1000 for run in clean], [run[key] for run in clean], marker="o", label=label)
    cpu.set_title("CPU µs per heartbeat (user + system; clean runs)")
    cpu.set_xlabel("idle connections (thousands)")
    cpu.set_ylim(bottom=0)
    cpu.legend()

    for axis in (memory, total, cpu):
        axis.grid(alpha=0.3)
        axis.set_xticks(thousands)
    fig.suptitle("socket-bench server lp4 --workers W, socket-bench client idle: heartbeat every 30 s (scripts/bench-1m.sh)")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
