"""The same Python SDK workload against `strata serve` and the Azurite table emulator.

    python benches/emulator_compare.py --strata target/release/strata \
        --azurite target/azurite/node_modules/.bin/azurite-table --entities 20000

(benches/emulator_compare.sh installs everything and runs this.) Each server is started on a
free loopback port with a fresh data directory; every row runs once with 1 client and once
with 8 client processes and reports throughput, the server's CPU time per operation and the
server's peak RSS so far (VmHWM from /proc/<pid>/status). The Python client costs about 1 ms
of CPU per request, so throughput is bounded by the client; CPU per operation is the server's
own cost.

Server CPU is the sum over the server's threads of the scheduler's run time in nanoseconds
(`/proc/<pid>/task/<tid>/schedstat`, user + system), so a row of a few milliseconds resolves
(utime + stime of /proc/<pid>/stat count 10 ms ticks: a partition-query row of 16,000
entities is ~3 ticks of strata CPU). A sampler thread reads every thread's run time every
POLL_S seconds during a row and keeps the last value it saw, so a thread that exits mid-row
(tokio's blocking-pool threads end after 10 s idle; by then they have been idle since the
last sample) still counts up to its last sample, and a thread born mid-row counts from zero.
The process's tick total (which does include exited threads) is printed alongside as a
cross-check, with the number of threads that exited during the row.

Each row pays for the background work it caused: once its operations have returned, the meter
keeps running until the server is quiet (its threads' run time grows by less than QUIET_NS
over a QUIET_WINDOW_S window, at most SETTLE_MAX_S), so the flushes and compactions a batch
load starts are counted in the batch row, not in the point reads that follow. The same rule
holds for both servers; the settle time is printed with each row.
"""

import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor

from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import TableClient, TableServiceClient, UpdateMode

ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
PARTITION_SIZE = 1000
BATCH = 100
START_TIMEOUT_S = 60
TICKS = os.sysconf("SC_CLK_TCK")
POLL_S = 0.05
QUIET_WINDOW_S = 0.2
QUIET_NS = 1_000_000
SETTLE_MAX_S = 5.0

_clients: dict = {}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(proc, port):
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"server exited at start with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"server did not listen on port {port}")
            time.sleep(0.1)


def server_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # Fields 14 and 15 (utime, stime) are at 11 and 12 after the ")" that ends the command name.
    return (int(fields[11]) + int(fields[12])) / TICKS


def thread_runtimes_ns(pid: int) -> dict:
    """Run time (ns, user + system) of each live thread of process `pid`, by thread id."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread exited between the listing and the read
    return out


class CpuMeter:
    """The server's CPU time over one row: nanoseconds summed over its threads, sampled every
    POLL_S seconds so exiting threads are kept; the process's ticks alongside as a cross-check."""

    def __init__(self, pid: int):
        self.pid = pid
        self.stop_event = threading.Event()
        self.base = thread_runtimes_ns(pid)
        self.last = dict(self.base)
        self.ticks0 = server_cpu_s(pid)
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()

    def _merge(self, seen: dict) -> None:
        for tid, ns in seen.items():
            self.last[tid] = max(ns, self.last.get(tid, 0))

    def _sample(self) -> None:
        while not self.stop_event.wait(POLL_S):
            self._merge(thread_runtimes_ns(self.pid))

    def settle(self) -> float:
        """Waits until the server is quiet (or SETTLE_MAX_S passed); returns the seconds waited."""
        start = time.monotonic()
        before = sum(thread_runtimes_ns(self.pid).values())
        while time.monotonic() - start < SETTLE_MAX_S:
            time.sleep(QUIET_WINDOW_S)
            now = sum(thread_runtimes_ns(self.pid).values())
            # A thread that exits in the window lowers the sum: that is not activity either.
            if now - before < QUIET_NS:
                break
            before = now
        return time.monotonic() - start

    def stop(self):
        """(CPU seconds from run times, CPU seconds from ticks, threads that exited)."""
        self.stop_event.set()
        self.sampler.join()
        final = thread_runtimes_ns(self.pid)
        self._merge(final)
        ns = sum(ns - self.base.get(tid, 0) for tid, ns in self.last.items())
        exited = sum(1 for tid in self.last if tid not in final)
        return ns / 1e9, server_cpu_s(self.pid) - self.ticks0, exited


def server_peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def table_client(endpoint: str, table: str) -> TableClient:
    key = (endpoint, table)
    if key not in _clients:
        _clients[key] = TableClient(endpoint=endpoint, table_name=table, credential=AzureNamedKeyCredential(ACCOUNT, KEY))
    return _clients[key]


def entity(pk: str, i: int) -> dict:
    return {"PartitionKey": pk, "RowKey": f"{i:08}", "N": i, "Group": f"g{i % 10}", "Payload": "x" * 100}


def work_batch_insert(endpoint, table, partitions):
    t = table_client(endpoint, table)
    for p in partitions:
        for base in range(0, PARTITION_SIZE, BATCH):
            t.submit_transaction([("create", entity(f"p{p:04}", i)) for i in range(base, base + BATCH)])
    return len(partitions) * PARTITION_SIZE


def work_point_read(endpoint, table, args):
    count, seed, partitions = args
    t = table_client(endpoint, table)
    rng = random.Random(seed)
    for _ in range(count):
        t.get_entity(f"p{rng.randrange(partitions):04}", f"{rng.randrange(PARTITION_SIZE):08}")
    return count


def work_partition_query(endpoint, table, partitions):
    t = table_client(endpoint, table)
    n = 0
    for p in partitions:
        n += sum(1 for _ in t.query_entities("PartitionKey eq @pk", parameters={"pk": f"p{p:04}"}))
    return n


def work_table_scan(endpoint, table, groups):
    t = table_client(endpoint, table)
    n = 0
    for g in groups:
        n += sum(1 for _ in t.query_entities("Group eq @g", parameters={"g": f"g{g}"}, results_per_page=1000))
    return n


def work_upsert(endpoint, table, args):
    count, seed, partitions = args
    t = table_client(endpoint, table)
    rng = random.Random(seed)
    for i in range(count):
        e = entity(f"p{rng.randrange(partitions):04}", rng.randrange(PARTITION_SIZE))
        e["N"] = -i
        t.upsert_entity(e, mode=UpdateMode.MERGE)
    return count


def warm(_):
    return os.getpid()


def run_row(pool, clients, fn, endpoint, table, shares):
    start = time.monotonic()
    futures = [pool.submit(fn, endpoint, table, s) for s in shares[:clients]]
    return sum(f.result() for f in futures), time.monotonic() - start


def split(items, n):
    return [items[i::n] for i in range(n)]


def bench_server(name, pid, endpoint, args, out):
    svc = TableServiceClient(endpoint=endpoint, credential=AzureNamedKeyCredential(ACCOUNT, KEY))
    partitions = args.entities // PARTITION_SIZE
    pools = {c: ProcessPoolExecutor(max_workers=c) for c in (1, 8)}
    for c, pool in pools.items():
        list(pool.map(warm, range(c)))
    try:
        for clients in (1, 8):
            pool = pools[clients]
            table = f"bench{clients}c"
            svc.delete_table(table)
            svc.create_table(table)
            rows = [
                ("batch insert 100", "entity", work_batch_insert, split(list(range(partitions)), clients)),
                ("point read", "read", work_point_read,
                 [(args.reads // clients, 100 + i, partitions) for i in range(clients)]),
                ("partition query", "entity", work_partition_query,
                 split([i % partitions for i in range(args.partition_queries)], clients)),
                ("filtered scan, paged", "entity", work_table_scan, split(list(range(args.scans)), clients)),
                ("single upsert", "upsert", work_upsert,
                 [(args.upserts // clients, 200 + i, partitions) for i in range(clients)]),
            ]
            for label, unit, fn, shares in rows:
                meter = CpuMeter(pid)
                ops, secs = run_row(pool, clients, fn, endpoint, table, shares)
                settle = meter.settle()
                cpu, ticks, exited = meter.stop()
                rss = server_peak_rss_mib(pid)
                per_op, ticks_per_op = cpu * 1e3 / max(ops, 1), ticks * 1e3 / max(ops, 1)
                rec = (name, label, clients, ops, unit, secs, ops / secs, per_op, ticks_per_op, exited, rss, settle)
                out.append(rec)
                print(f"{name:8} {label:22} {clients:>2} {ops:>7} {unit:6} {secs:8.2f} s {ops / secs:9.0f}/s "
                      f"{per_op:9.5f} ms/op (ticks {ticks_per_op:.4f}, {exited} exited) {rss:7.1f} MiB "
                      f"settled {settle:.1f} s",
                      flush=True)
            svc.delete_table(table)
    finally:
        for pool in pools.values():
            pool.shutdown()


def start(cmd, port, log):
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    wait_listening(proc, port)
    return proc


def stop(proc):
    """Ends a server: SIGTERM (graceful shutdown), SIGKILL if it has not exited within 30 s."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", help="strata binary (release build)")
    ap.add_argument("--azurite", help="azurite-table launcher")
    ap.add_argument("--entities", type=int, default=20000, help="entities loaded (multiple of 1000)")
    ap.add_argument("--reads", type=int, default=4000)
    ap.add_argument("--upserts", type=int, default=4000)
    ap.add_argument("--partition-queries", type=int, default=16)
    ap.add_argument("--scans", type=int, default=8, help="filtered scans, each over the whole table")
    ap.add_argument("--strata-arg", action="append", default=[], metavar="ARG",
                    help="extra argument of `strata serve` (repeat: --strata-arg=--cache-mib --strata-arg=8)")
    ap.add_argument("--markdown", help="also write the table as Markdown to this file")
    args = ap.parse_args()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()[0]

    results = []
    work = tempfile.mkdtemp(prefix="emulator-compare-")
    try:
        for name, launcher in (("azurite", args.azurite), ("strata", args.strata)):
            if not launcher:
                continue
            port = free_port()
            data = os.path.join(work, name)
            os.makedirs(data)
            log = open(os.path.join(work, f"{name}.log"), "wb")
            if name == "strata":
                cmd = [launcher, "serve", "--db", os.path.join(data, "bench.db"), "--addr", f"127.0.0.1:{port}",
                       *args.strata_arg]
            else:
                cmd = [launcher, "--tableHost", "127.0.0.1", "--tablePort", str(port), "--location", data,
                       "--silent", "--disableTelemetry", "--skipApiVersionCheck"]
            proc = start(cmd, port, log)
            try:
                bench_server(name, proc.pid, f"http://127.0.0.1:{port}/{ACCOUNT}", args, results)
            finally:
                stop(proc)
                log.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [
        f"Entities: {args.entities}; reads {args.reads}, upserts {args.upserts}, "
        f"partition queries {args.partition_queries}, filtered scans {args.scans} (each 1/10 of the table).",
        f"Run {started}, load average {load_before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end"
        + (f"; strata serve {' '.join(args.strata_arg)}" if args.strata_arg else "") + ".",
        "",
        "Server CPU from the threads' run times (ns), each row metered until the server was quiet again "
        "(settle s); the tick figure (10 ms resolution) is the cross-check.",
        "",
        "| server | row | clients | ops | unit | ops/s | server CPU ms/op | ticks ms/op | threads exited "
        "| peak RSS MiB | settle s |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, label, clients, ops, unit, secs, rate, cpu, ticks, exited, rss, settle in results:
        lines.append(f"| {name} | {label} | {clients} | {ops} | {unit} | {rate:.0f} | {cpu:.5f} | {ticks:.4f} "
                     f"| {exited} | {rss:.1f} | {settle:.1f} |")
    print("\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
