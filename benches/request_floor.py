"""Server CPU per point read, durable merge upsert and batch: the floor server beside strata and Azurite.

    target/sdk-venv/bin/python benches/request_floor.py \
        --floor target/release/examples/request_floor \
        --variant epoll:direct:written --variant threads:direct:written ... \
        [--strata target/release/strata] [--azurite target/azurite/node_modules/.bin/azurite-table] \
        [--rounds 2] [--reads 1000] [--upserts 1000] [--batches 0] [--clients 1,8] \
        [--perf stat|record|trace|none] [--out DIR]

The floor server (`examples/request_floor.rs`, one `--variant io:sync:blocks` per layout) answers
the SDK with canned bytes and one durable write per wake-up with write requests (a page for single
writes, 5 per batch); strata and Azurite are
started on a fresh data directory and batch-loaded with 20 partitions of 1,000 entities first.
Each server then runs the "point read" and "single upsert" rows of `emulator_compare.py` (the
same SDK calls, 1 and 8 client processes) and its CPU per operation is metered exactly as that
bench does (threads' schedstat, until quiet). Servers are alternated within a round and each
round starts them afresh; the table at the end gives the median over rounds. `--perf stat`
also counts, per operation, the server's context switches and system calls (`perf stat -p`;
its tracepoints cost the server some CPU, so take CPU figures from `--perf none` rounds);
`--perf record` leaves `perf record -e cpu-clock -g` data per row in `--out`; `--perf trace`
prints `perf trace -s` (system calls by kind, per thread) per row.

Every row also splits the server's CPU into user and system time (the process's utime and
stime of /proc/<pid>/stat: tick-sampled at CONFIG_HZ, so use rows of a few thousand operations,
scaled to the schedstat total) and counts per operation its voluntary and involuntary context
switches (the threads' /proc status, sampled so exiting threads are kept) and minor page faults.
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
from emulator_compare import (ACCOUNT, BATCH, KEY, CpuMeter, entity, free_port, stop, table_client,  # noqa: E402
                              wait_listening, warm, work_batch_insert, work_point_read, work_upsert)

from azure.core.credentials import AzureNamedKeyCredential  # noqa: E402
from azure.data.tables import TableServiceClient  # noqa: E402

PARTITIONS = 20
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
TABLE = "bench"
SYSCALLS = ["epoll_wait", "epoll_pwait", "epoll_ctl", "recvfrom", "read", "sendto", "writev", "write", "pwrite64",
            "pwritev", "pwritev2", "fdatasync", "futex", "madvise", "mmap", "munmap", "brk", "clock_gettime",
            "sched_yield", "io_uring_enter"]
EVENTS = ("task-clock,context-switches,page-faults,block:block_rq_issue,raw_syscalls:sys_enter,"
          + ",".join(f"syscalls:sys_enter_{s}" for s in SYSCALLS))


def launch(kind, spec, binary, port, work):
    if kind == "floor":
        io, sync, blocks, *spin = spec.split(":")
        return [binary, "--addr", f"127.0.0.1:{port}", "--io", io, "--sync", sync, "--blocks", blocks,
                "--file", os.path.join(work, "floor.journal"), *(["--spin-us", spin[0]] if spin else [])]
    if kind == "strata":
        return [binary, "serve", "--db", os.path.join(work, "bench.db"), "--addr", f"127.0.0.1:{port}"]
    return [binary, "--tableHost", "127.0.0.1", "--tablePort", str(port), "--location", work,
            "--silent", "--disableTelemetry", "--skipApiVersionCheck"]


def process_stat(pid):
    """(utime, stime, minor faults) of the whole process, exited threads included."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # Fields 10, 14 and 15 (minflt, utime, stime) are at 7, 11 and 12 after the ")".
    return int(fields[11]), int(fields[12]), int(fields[7])


def thread_switches(pid):
    """(voluntary, involuntary) context switches of each live thread of `pid`, by thread id."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                counts = dict(line.split(":", 1) for line in f if "ctxt_switches" in line)
            out[int(tid)] = (int(counts["voluntary_ctxt_switches"]), int(counts["nonvoluntary_ctxt_switches"]))
        except (FileNotFoundError, ProcessLookupError, KeyError):
            pass
    return out


class KernelMeter(CpuMeter):
    """CpuMeter plus the process's user/system ticks, minor faults and the threads' switches."""

    def __init__(self, pid):
        self.stat0 = process_stat(pid)
        self.switches0 = thread_switches(pid)
        self.switches = dict(self.switches0)
        super().__init__(pid)

    def _merge(self, seen):
        super()._merge(seen)
        for tid, counts in thread_switches(self.pid).items():
            old = self.switches.get(tid, (0, 0))
            self.switches[tid] = (max(old[0], counts[0]), max(old[1], counts[1]))

    def stop(self):
        """(CPU seconds, user share of the ticks, voluntary switches, involuntary, minor faults)."""
        cpu, _, _ = super().stop()
        utime, stime, minflt = (b - a for a, b in zip(self.stat0, process_stat(self.pid)))
        vol = sum(c[0] - self.switches0.get(t, (0, 0))[0] for t, c in self.switches.items())
        invol = sum(c[1] - self.switches0.get(t, (0, 0))[1] for t, c in self.switches.items())
        return cpu, utime / max(utime + stime, 1), vol, invol, minflt


def perf_counts(path, ops):
    counts = {}
    for line in open(path):
        fields = line.strip().split(",")
        if len(fields) > 3 and fields[0] and fields[0][0].isdigit():
            name = fields[2].replace("syscalls:sys_enter_", "")
            counts[name] = float(fields[0]) / ops
    return counts


def work_batches(endpoint, table, args):
    """`count` SDK batches of 100 creates (fresh row keys per batch), as the batch row inserts."""
    count, seed = args
    t = table_client(endpoint, table)
    for b in range(count):
        pk = f"b{seed:03}-{b:05}"
        t.submit_transaction([("create", entity(pk, i)) for i in range(BATCH)])
    return count * BATCH


def rows(args):
    out = [("point read", work_point_read, args.reads, 100), ("single upsert", work_upsert, args.upserts, 200)]
    if args.batches:
        out.append(("batch insert 100", work_batches, args.batches, 300))
    return out


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
            for row, fn, count, seed in rows(args):
                if fn is work_batches:
                    shares = [(count // clients, seed + i + 10 * clients) for i in range(clients)]
                else:
                    shares = [(count // clients, seed + i, PARTITIONS) for i in range(clients)]
                perf, stat_path = None, os.path.join(work, "perf.stat")
                tag = f"{name}-{row}-{clients}c".replace(" ", "_").replace(":", "-")
                if args.perf == "stat":
                    perf = subprocess.Popen(["perf", "stat", "-x,", "-e", EVENTS, "-p", str(proc.pid),
                                             "-o", stat_path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                elif args.perf == "record":
                    perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.freq), "-g",
                                             "-p", str(proc.pid), "-o", os.path.join(args.out, f"{tag}.data")],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                elif args.perf == "trace":
                    perf = subprocess.Popen(["perf", "trace", "-s", "-p", str(proc.pid),
                                             "-o", os.path.join(args.out, f"{tag}.trace")],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if perf:
                    time.sleep(0.5)
                meter = KernelMeter(proc.pid)
                start = time.monotonic()
                ops = sum(f.result() for f in [pools[clients].submit(fn, endpoint, TABLE, s) for s in shares])
                secs = time.monotonic() - start
                meter.settle()
                cpu, user_share, vol, invol, minflt = meter.stop()
                counts = {}
                if perf:
                    perf.send_signal(signal.SIGINT)
                    perf.wait()
                if args.perf == "stat":
                    counts = perf_counts(stat_path, ops)
                us = cpu * 1e6 / ops
                split = (us * user_share, us * (1 - user_share), vol / ops, invol / ops, minflt / ops)
                results.append((name, row, clients, us, counts, split))
                extra = " ".join(f"{k}={v:.2f}" for k, v in counts.items() if k != "task-clock" and v >= 0.005)
                print(f"{name:34} {row:16} {clients:>2}c {ops:>6} ops {ops / secs:6.0f}/s "
                      f"{us:7.2f} us/op (user {split[0]:6.2f} sys {split[1]:6.2f}) vcsw {split[2]:.2f} "
                      f"ivcsw {split[3]:.3f} minflt {split[4]:.3f} load {os.getloadavg()[0]:4.1f} {extra}",
                      flush=True)
    finally:
        stop(proc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--floor", help="request_floor binary")
    ap.add_argument("--variant", action="append", default=[],
                    help="io:sync:blocks[:spin-us] of the floor server (spin: user time per read)")
    ap.add_argument("--strata", action="append", default=[], help="strata binary (repeat to alternate two)")
    ap.add_argument("--azurite", help="azurite-table launcher")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--reads", type=int, default=1000)
    ap.add_argument("--upserts", type=int, default=1000)
    ap.add_argument("--clients", default="1,8")
    ap.add_argument("--batches", type=int, default=0, help="SDK batches of 100 creates per client count (0: no row)")
    ap.add_argument("--perf", default="none", choices=["stat", "record", "trace", "none"])
    ap.add_argument("--freq", type=int, default=4000, help="--perf record sampling frequency (Hz)")
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
    print(f"\n| server | row | clients | CPU us/op | user | system | vol. switches | invol. | minor faults "
          f"| runs (CPU us/op) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for name, *_ in servers:
        for row, *_ in rows(args):
            for clients in args.clients:
                runs = [r for r in results if r[0] == name and r[1] == row and r[2] == clients]
                if runs:
                    med = [statistics.median(r[5][k] for r in runs) for k in range(5)]
                    print(f"| {name} | {row} | {clients} | {statistics.median(r[3] for r in runs):.2f} | "
                          f"{med[0]:.2f} | {med[1]:.2f} | {med[2]:.2f} | {med[3]:.3f} | {med[4]:.3f} | "
                          f"{' / '.join(f'{r[3]:.1f}' for r in runs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
