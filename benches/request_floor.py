"""Server CPU per point read and per durable merge upsert: the floor server beside strata and Azurite.

    target/sdk-venv/bin/python benches/request_floor.py \
        --floor target/release/examples/request_floor \
        --variant epoll:direct:written --variant threads:direct:written ... \
        [--strata target/release/strata] [--azurite target/azurite/node_modules/.bin/azurite-table] \
        [--rounds 2] [--reads 1000] [--upserts 1000] [--clients 1,8] [--perf stat|record|none] [--out DIR]

The floor server (`examples/request_floor.rs`, one `--variant io:sync:blocks` per layout) answers
the SDK with canned bytes and one durable page write per write request; strata and Azurite are
started on a fresh data directory and batch-loaded with 20 partitions of 1,000 entities first.
Each server then runs the "point read" and "single upsert" rows of `emulator_compare.py` (the
same SDK calls, 1 and 8 client processes) and its CPU per operation is metered exactly as that
bench does (threads' schedstat, until quiet). Servers are alternated within a round and each
round starts them afresh; the table at the end gives the median over rounds. `--perf stat`
also counts, per operation, the server's context switches and system calls (`perf stat -p`;
its tracepoints cost the server some CPU, so take CPU figures from `--perf none` rounds);
`--perf record` leaves `perf record -e cpu-clock -g` data per row in `--out`.
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulator_compare import (ACCOUNT, KEY, CpuMeter, free_port, stop, wait_listening, warm,  # noqa: E402
                              work_batch_insert, work_point_read, work_upsert)

from azure.core.credentials import AzureNamedKeyCredential  # noqa: E402
from azure.data.tables import TableServiceClient  # noqa: E402

PARTITIONS = 20
TABLE = "bench"
SYSCALLS = ["epoll_wait", "epoll_pwait", "recvfrom", "read", "sendto", "writev", "write", "pwrite64",
            "pwritev2", "fdatasync", "futex", "io_uring_enter"]
EVENTS = "task-clock,context-switches,page-faults,block:block_rq_issue," + ",".join(f"syscalls:sys_enter_{s}" for s in SYSCALLS)


def launch(kind, spec, binary, port, work):
    if kind == "floor":
        io, sync, blocks = spec.split(":")
        return [binary, "--addr", f"127.0.0.1:{port}", "--io", io, "--sync", sync, "--blocks", blocks,
                "--file", os.path.join(work, "floor.journal")]
    if kind == "strata":
        return [binary, "serve", "--db", os.path.join(work, "bench.db"), "--addr", f"127.0.0.1:{port}"]
    return [binary, "--tableHost", "127.0.0.1", "--tablePort", str(port), "--location", work,
            "--silent", "--disableTelemetry", "--skipApiVersionCheck"]


def perf_counts(path, ops):
    counts = {}
    for line in open(path):
        fields = line.strip().split(",")
        if len(fields) > 3 and fields[0] and fields[0][0].isdigit():
            name = fields[2].replace("syscalls:sys_enter_", "")
            counts[name] = float(fields[0]) / ops
    return counts


def bench(name, kind, cmd, work, pools, args, results):
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = int(cmd[cmd.index("--addr") + 1].rsplit(":", 1)[1]) if "--addr" in cmd else int(
        cmd[cmd.index("--tablePort") + 1])
    try:
        wait_listening(proc, port)
        endpoint = f"http://127.0.0.1:{port}/{ACCOUNT}"
        if kind != "floor":
            svc = TableServiceClient(endpoint=endpoint, credential=AzureNamedKeyCredential(ACCOUNT, KEY))
            svc.create_table(TABLE)
            list(pools[1].map(work_batch_insert, [endpoint], [TABLE], [list(range(PARTITIONS))]))
            meter = CpuMeter(proc.pid)
            meter.settle()
            meter.stop()
        for clients in args.clients:
            for row, fn, count, seed in (("point read", work_point_read, args.reads, 100),
                                         ("single upsert", work_upsert, args.upserts, 200)):
                shares = [(count // clients, seed + i, PARTITIONS) for i in range(clients)]
                perf, stat_path = None, os.path.join(work, "perf.stat")
                if args.perf == "stat":
                    perf = subprocess.Popen(["perf", "stat", "-x,", "-e", EVENTS, "-p", str(proc.pid),
                                             "-o", stat_path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                elif args.perf == "record":
                    tag = f"{name}-{row}-{clients}c".replace(" ", "_").replace(":", "-")
                    perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-p", str(proc.pid),
                                             "-o", os.path.join(args.out, f"{tag}.data")],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if perf:
                    time.sleep(0.5)
                meter = CpuMeter(proc.pid)
                start = time.monotonic()
                ops = sum(f.result() for f in [pools[clients].submit(fn, endpoint, TABLE, s) for s in shares])
                secs = time.monotonic() - start
                meter.settle()
                cpu, _, _ = meter.stop()
                counts = {}
                if perf:
                    perf.send_signal(signal.SIGINT)
                    perf.wait()
                if args.perf == "stat":
                    counts = perf_counts(stat_path, ops)
                us = cpu * 1e6 / ops
                results.append((name, row, clients, us, counts))
                extra = " ".join(f"{k}={v:.2f}" for k, v in counts.items() if k != "task-clock" and v >= 0.005)
                print(f"{name:34} {row:14} {clients:>2}c {ops:>5} ops {ops / secs:6.0f}/s "
                      f"{us:8.1f} us/op load {os.getloadavg()[0]:4.1f} {extra}", flush=True)
    finally:
        stop(proc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--floor", help="request_floor binary")
    ap.add_argument("--variant", action="append", default=[], help="io:sync:blocks of the floor server")
    ap.add_argument("--strata", action="append", default=[], help="strata binary (repeat to alternate two)")
    ap.add_argument("--azurite", help="azurite-table launcher")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--reads", type=int, default=1000)
    ap.add_argument("--upserts", type=int, default=1000)
    ap.add_argument("--clients", default="1,8")
    ap.add_argument("--perf", default="none", choices=["stat", "record", "none"])
    ap.add_argument("--out", default="/var/tmp", help="where --perf record leaves its data")
    ap.add_argument("--dir", default="/var/tmp", help="where data directories and journals go")
    args = ap.parse_args()
    args.clients = [int(c) for c in args.clients.split(",")]
    servers = [(f"floor {v}", "floor", v, args.floor) for v in args.variant]
    servers += [(f"strata {os.path.basename(b)}", "strata", None, b) for b in args.strata]
    if args.azurite:
        servers.append(("azurite", "azurite", None, args.azurite))
    pools = {c: ProcessPoolExecutor(max_workers=c) for c in set(args.clients) | {1}}
    for c, pool in pools.items():
        list(pool.map(warm, range(c)))
    results = []
    print(f"start {time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.1f}", flush=True)
    try:
        for _ in range(args.rounds):
            for name, kind, spec, binary in servers:
                work = tempfile.mkdtemp(prefix="request-floor-", dir=args.dir)
                try:
                    bench(name, kind, launch(kind, spec, binary, free_port(), work), work, pools, args, results)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
    finally:
        for pool in pools.values():
            pool.shutdown()
    print(f"end {time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.1f}")
    print(f"\n| server | row | clients | server CPU us/op (median of {args.rounds}) | runs |")
    print("|---|---|---:|---:|---|")
    for name, *_ in servers:
        for row in ("point read", "single upsert"):
            for clients in args.clients:
                runs = [r[3] for r in results if r[0] == name and r[1] == row and r[2] == clients]
                if runs:
                    print(f"| {name} | {row} | {clients} | {statistics.median(runs):.1f} | "
                          f"{' / '.join(f'{r:.1f}' for r in runs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
