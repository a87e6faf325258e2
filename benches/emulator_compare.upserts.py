"""The single-upsert rows of `emulator_compare.py` alone, with the kernel's counts per upsert:

    target/sdk-venv/bin/python benches/emulator_compare.upserts.py target/release/strata \
        [--n 1000] [--clients 1,8] [--perf stat|record|sched|none] [--out DIR]

Starts `strata serve` on a fresh database, batch-loads 20 partitions of 1,000 entities, then
runs N SDK merge upserts at random keys with each client count. Per row it prints the server's
CPU per upsert (threads' schedstat, as emulator_compare.py) and, with `--perf stat` (the
default), `perf stat -p <server>` counts per upsert: task-clock, context switches, page faults
and the system calls of a request (epoll_wait, recvfrom, writev, pwrite64, futex, write...).
`--perf record` / `sched` leave `perf record -e cpu-clock -g` / `-e sched:sched_switch -g`
data in DIR. Counts per operation are deterministic enough to compare binaries on a loaded
machine; the CPU figure is not (alternate the binaries).
"""
import argparse, os, subprocess, sys, tempfile, shutil, time, signal
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulator_compare import (free_port, wait_listening, CpuMeter, work_batch_insert, work_upsert, warm,
    ACCOUNT, KEY, split)
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import TableServiceClient
from concurrent.futures import ProcessPoolExecutor
ap = argparse.ArgumentParser()
ap.add_argument("binary"); ap.add_argument("--n", type=int, default=1000)
ap.add_argument("--clients", default="1,8"); ap.add_argument("--perf", default="stat")
ap.add_argument("--out", default=tempfile.gettempdir() + "/emulator-upserts"); ap.add_argument("--tag", default="")
a = ap.parse_args()
os.makedirs(a.out, exist_ok=True)
EV = "task-clock,context-switches,cpu-migrations,page-faults," + ",".join(
    f"syscalls:sys_enter_{s}" for s in ["epoll_wait","recvfrom","writev","pwrite64","pwritev2","futex","write","fdatasync","sendto","read"])
work = tempfile.mkdtemp(prefix="emulator-upserts-")
port = free_port()
proc = subprocess.Popen([a.binary, "serve", "--db", f"{work}/db", "--addr", f"127.0.0.1:{port}"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wait_listening(proc, port)
ep = f"http://127.0.0.1:{port}/{ACCOUNT}"
try:
    svc = TableServiceClient(endpoint=ep, credential=AzureNamedKeyCredential(ACCOUNT, KEY))
    svc.create_table("ups")
    pools = {c: ProcessPoolExecutor(max_workers=c) for c in map(int, a.clients.split(","))}
    for c, p in pools.items(): list(p.map(warm, range(c)))
    P = 20
    first = next(iter(pools.values()))
    list(first.map(work_batch_insert, [ep]*1, ["ups"]*1, [list(range(P))]))
    time.sleep(1.0)
    for c, pool in pools.items():
        shares = [(a.n // c, 200 + i + 17*c, P) for i in range(c)]
        perf = None
        tag = f"{a.tag}c{c}"
        if a.perf == "stat":
            perf = subprocess.Popen(["perf", "stat", "-x,", "-e", EV, "-p", str(proc.pid), "-o", f"{a.out}/{tag}.stat"])
        elif a.perf == "record":
            perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-p", str(proc.pid), "-o", f"{a.out}/{tag}.data"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elif a.perf == "sched":
            perf = subprocess.Popen(["perf", "record", "-q", "-e", "sched:sched_switch", "-g", "-p", str(proc.pid), "-o", f"{a.out}/{tag}.sched"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if perf: time.sleep(0.5)
        meter = CpuMeter(proc.pid)
        t0 = time.monotonic()
        futs = [pool.submit(work_upsert, ep, "ups", s) for s in shares]
        ops = sum(f.result() for f in futs)
        secs = time.monotonic() - t0
        meter.settle()
        cpu, _, _ = meter.stop()
        if perf:
            perf.send_signal(signal.SIGINT); perf.wait()
        line = f"{tag} clients={c} ops={ops} {ops/secs:.0f}/s cpu_us/op={cpu*1e6/ops:.1f} load={os.getloadavg()[0]:.1f}"
        if a.perf == "stat":
            for l in open(f"{a.out}/{tag}.stat"):
                f = l.strip().split(",")
                if len(f) > 3 and f[0] and f[0][0].isdigit():
                    name = f[2].replace("syscalls:sys_enter_", "")
                    v = float(f[0])
                    line += f" {name}={v/ops:.3f}" if name != "task-clock" else f" task_us={v*1e3/ops:.1f}"
        print(line, flush=True)
    for p in pools.values(): p.shutdown()
finally:
    proc.terminate(); proc.wait()
    shutil.rmtree(work, ignore_errors=True)
