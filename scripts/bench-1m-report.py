#!/usr/bin/env python3
"""bench-1m-report.py — the figures of one scripts/bench-1m.sh run, from the files it left in OUT.

Usage: bench-1m-report.py OUT --connections N --heartbeat H --hold HOLD

Prints one `RESULT bench=idle-1m key=value …` line on standard output and writes OUT/report.txt (the
same figures, and the slab caches that grew most). Exits 1 when a connection was not held: a connect
failed, a heartbeat was missed, a connection dropped or mismatched, or the hold was shorter than HOLD.

Snapshots (see bench-1m.sh): `before` (no server yet), `servers-up` (workers listening, no
connection), `held` (every connection open, one heartbeat period after the last connect), `measured`
(whole heartbeat periods later; CPU is measured from held to measured).

- Server and client memory per connection: the sum over the processes of VmRSS (and RssAnon, their
  private heap and stacks), held minus servers-up for the servers, held for the clients (their start-up
  included: they connect as soon as they start), divided by N.
- Kernel memory per socket: the memory of every slab cache (slabs × pages per slab × page size, from
  /proc/slabinfo), held minus before, divided by the 2N sockets (both ends are on this box); and
  /proc/meminfo's Slab the same way. MemTotal − MemAvailable is the whole machine (other processes too).
- CPU per heartbeat: utime + stime of the processes from held to measured, divided by the heartbeats in
  that time (every connection beats once per period, staggered evenly: N × seconds / H).
"""
import argparse
import os
import re
import sys


def read(path):
    with open(path) as f:
        return f.read()


def meminfo(out, name):
    return {line.split(":")[0]: int(line.split()[1]) * 1024
            for line in read(f"{out}/{name}.meminfo").splitlines() if line.split()[1:]}


def slabs(out, name):
    """Bytes held by each slab cache: num_slabs × pages_per_slab × page size."""
    page = os.sysconf("SC_PAGE_SIZE")
    caches = {}
    for line in read(f"{out}/{name}.slabinfo").splitlines()[2:]:
        fields = line.split()
        # name active_objs num_objs objsize objperslab pagesperslab : tunables … : slabdata active num shared
        caches[fields[0]] = (int(fields[2]), int(fields[5]) * int(fields[14]) * page)
    return caches


def processes(out, name):
    """role -> (VmRSS bytes, RssAnon bytes, CPU ticks), summed, and the count of processes."""
    sums = {}
    for line in read(f"{out}/{name}.procs").splitlines():
        role, _, rss, anon, ticks = line.split()
        total = sums.setdefault(role, [0, 0, 0, 0])
        total[0] += int(rss) * 1024
        total[1] += int(anon) * 1024
        total[2] += int(ticks)
        total[3] += 1
    return sums


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--connections", type=int, required=True)
    parser.add_argument("--heartbeat", type=float, required=True)
    parser.add_argument("--hold", type=float, required=True)
    args = parser.parse_args()
    out, n = args.out, args.connections
    ticks_per_second = os.sysconf("SC_CLK_TCK")

    totals = dict(connected=0, alive=0, hb_sent=0, hb_ok=0, hb_missed=0, errors=0, mismatches=0, connect_fail=0)
    clients = 0
    for line in read(f"{out}/results.txt").splitlines():
        if not line.startswith("RESULT "):
            continue
        clients += 1
        fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        for key in totals:
            totals[key] += int(fields.get(key, 0))

    # "heartbeats every 30 s for 330 s from unix 1765044000.123"
    pattern = re.compile(r"heartbeats every [\d.]+ s for ([\d.]+) s from unix ([\d.]+)")
    starts, ends = [], []
    for name in sorted(os.listdir(out)):
        if name.startswith("client.") and name.endswith(".log"):
            for match in pattern.finditer(read(f"{out}/{name}")):
                starts.append(float(match.group(2)))
                ends.append(float(match.group(2)) + float(match.group(1)))
    connect_seconds = float(read(f"{out}/connected.time")) - float(read(f"{out}/start.time"))
    hold = min(ends) - max(starts) if starts else 0

    before, up, held, measured = (processes(out, name) for name in ("before", "servers-up", "held", "measured"))
    server_rss = (held["server"][0] - up["server"][0]) / n
    server_anon = (held["server"][1] - up["server"][1]) / n
    server_growth = (measured["server"][1] - held["server"][1]) / n
    client_rss, client_anon = held["client"][0] / n, held["client"][1] / n
    seconds = float(read(f"{out}/measured.time")) - float(read(f"{out}/held.time"))
    heartbeats = n * seconds / args.heartbeat
    cpu = {role: (measured[role][2] - held[role][2]) / ticks_per_second for role in ("server", "client")}

    slab_before, slab_held = slabs(out, "before"), slabs(out, "held")
    slab_delta = {name: slab_held[name][1] - slab_before.get(name, (0, 0))[1] for name in slab_held}
    sockets = 2 * n
    mem_before, mem_held = meminfo(out, "before"), meminfo(out, "held")
    used = lambda m: m["MemTotal"] - m["MemAvailable"]

    figures = dict(
        bench="idle-1m", n=n, workers=held["server"][3], clients=clients, **totals,
        connect_s=f"{connect_seconds:.1f}", hold_s=f"{hold:.0f}",
        server_rss_b_per_conn=f"{server_rss:.0f}", server_anon_b_per_conn=f"{server_anon:.0f}",
        server_anon_growth_b_per_conn=f"{server_growth:.1f}",
        client_rss_b_per_conn=f"{client_rss:.0f}", client_anon_b_per_conn=f"{client_anon:.0f}",
        slab_b_per_socket=f"{sum(slab_delta.values()) / sockets:.0f}",
        tcp_slab_b_per_socket=f"{slab_delta.get('TCP', 0) / sockets:.0f}",
        meminfo_slab_b_per_socket=f"{(mem_held['Slab'] - mem_before['Slab']) / sockets:.0f}",
        meminfo_used_b_per_conn=f"{(used(mem_held) - used(mem_before)) / n:.0f}",
        server_cpu_us_per_hb=f"{cpu['server'] * 1e6 / heartbeats:.2f}",
        client_cpu_us_per_hb=f"{cpu['client'] * 1e6 / heartbeats:.2f}",
        cpu_window_s=f"{seconds:.0f}",
        established_held=read(f"{out}/held.established").strip() if os.path.exists(f"{out}/held.established") else "-",
    )
    print("RESULT " + " ".join(f"{key}={value}" for key, value in figures.items()))

    with open(f"{out}/report.txt", "w") as report:
        report.write("\n".join(f"{key} = {value}" for key, value in figures.items()) + "\n\n")
        report.write(f"slab caches that grew most, held minus before, bytes per socket ({sockets} sockets):\n")
        for name, delta in sorted(slab_delta.items(), key=lambda item: -item[1])[:12]:
            objects = slab_held[name][0] - slab_before.get(name, (0, 0))[0]
            report.write(f"  {name:24} {delta / sockets:8.1f}   ({objects / sockets:+.3f} objects per socket)\n")
        report.write("\n/proc/meminfo, held minus before, bytes per socket:\n")
        for key in ("MemFree", "MemAvailable", "Slab", "SReclaimable", "SUnreclaim", "KernelStack", "PageTables", "AnonPages"):
            report.write(f"  {key:14} {(mem_held[key] - mem_before[key]) / sockets:10.1f}\n")

    clean = (totals["connected"] == n and totals["alive"] == n and totals["hb_missed"] == 0 and totals["errors"] == 0
             and totals["mismatches"] == 0 and hold >= args.hold)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
