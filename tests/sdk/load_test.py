"""Load test: N concurrent SDK clients of mixed reads, writes and batches against `strata serve`.

    python tests/sdk/load_test.py --strata target/debug/strata --clients 64 --duration 30

starts `strata serve` on a free loopback port with a fresh database, runs the clients for the
given time (bounded: it stops by itself), kills the server hard (SIGKILL, so nothing but what
was acknowledged and made durable can survive), restarts it on the same file and checks that
every acknowledged write is there: each client owns one partition and keeps an exact model of
it; shared counters are incremented with ETag-conditioned updates, where a 412 is the intended
conflict (retried), and must end equal to the number of acknowledged increments. Any other
error fails the run. Prints throughput and p50/p99/max latency per operation kind.

`--endpoint URL` runs the same workload against an already running server (e.g. Azurite) and
verifies without a restart.
"""

import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor

from azure.core import MatchConditions
from azure.core.credentials import AzureNamedKeyCredential
from azure.core.exceptions import ResourceModifiedError
from azure.data.tables import EdmType, EntityProperty, TableClient, TableServiceClient, UpdateMode

ACCOUNT = "devstoreaccount1"
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
TABLE = "loadtest"
COUNTERS = 8
START_TIMEOUT_S = 30
# Operation mix: kind -> weight.
MIX = {
    "read": 30,
    "upsert": 20,
    "insert": 10,
    "batch": 10,
    "query": 10,
    "counter": 10,
    "delete": 10,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(binary: str, db: str, port: int, log) -> subprocess.Popen:
    proc = subprocess.Popen(
        [binary, "serve", "--db", db, "--addr", f"127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            log.flush()
            with open(log.name, errors="replace") as f:
                tail = f.read()[-4000:]
            raise SystemExit(f"strata serve exited at start with {proc.returncode}:\n{tail}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"strata serve did not listen on port {port}")
            time.sleep(0.05)


def client_for(endpoint: str) -> TableClient:
    return TableClient(endpoint=endpoint, table_name=TABLE, credential=AzureNamedKeyCredential(ACCOUNT, KEY))


def props(rng: random.Random, seq: int) -> dict:
    p = {"V": seq, "S": f"s{rng.randrange(10**6)}"}
    if rng.random() < 0.3:
        p["L"] = EntityProperty(rng.randrange(2**40, 2**62), EdmType.INT64)
    return p


def comparable(entity) -> dict:
    out = {}
    for k, v in entity.items():
        if k in ("PartitionKey", "RowKey"):
            continue
        out[k] = v.value if isinstance(v, EntityProperty) else v
    return out


class Client:
    """One simulated application: owns partition `pk` and mirrors it in `model`."""

    def __init__(self, endpoint: str, index: int, deadline: float, seed: int):
        self.table = client_for(endpoint)
        self.pk = f"c{index:03}"
        self.rng = random.Random(seed)
        self.deadline = deadline
        self.model: dict = {}
        self.etags: dict = {}
        self.next_rk = 0
        self.seq = 0
        self.latencies: dict = {k: [] for k in MIX}
        self.errors: list = []
        self.conflicts = 0
        self.increments = [0] * COUNTERS

    def new_rk(self) -> str:
        self.next_rk += 1
        return f"r{self.next_rk:07}"

    def some_rk(self):
        return self.rng.choice(list(self.model)) if self.model else None

    def run(self):
        kinds = list(MIX)
        weights = [MIX[k] for k in kinds]
        while time.monotonic() < self.deadline:
            kind = self.rng.choices(kinds, weights)[0]
            start = time.perf_counter()
            try:
                getattr(self, f"op_{kind}")()
            except Exception as e:  # noqa: BLE001 - every unexpected failure is a test failure
                self.errors.append(f"{kind} in {self.pk}: {type(e).__name__}: {str(e)[:300]}")
                continue
            self.latencies[kind].append(time.perf_counter() - start)

    def op_read(self):
        rk = self.some_rk()
        if rk is None:
            return self.op_insert()
        got = self.table.get_entity(self.pk, rk)
        if comparable(got) != comparable(self.model[rk]):
            self.errors.append(f"read {self.pk}/{rk}: got {comparable(got)} expected {comparable(self.model[rk])}")

    def op_insert(self):
        rk = self.new_rk()
        self.seq += 1
        e = {"PartitionKey": self.pk, "RowKey": rk, **props(self.rng, self.seq)}
        meta = self.table.create_entity(e)
        self.model[rk] = e
        self.etags[rk] = meta["etag"]

    def op_upsert(self):
        rk = self.some_rk() if self.rng.random() < 0.8 else self.new_rk()
        if rk is None:
            rk = self.new_rk()
        self.seq += 1
        e = {"PartitionKey": self.pk, "RowKey": rk, **props(self.rng, self.seq)}
        mode = self.rng.choice([UpdateMode.MERGE, UpdateMode.REPLACE])
        meta = self.table.upsert_entity(e, mode=mode)
        if mode == UpdateMode.MERGE and rk in self.model:
            self.model[rk] = {**self.model[rk], **e}
        else:
            self.model[rk] = e
        self.etags[rk] = meta["etag"]

    def op_delete(self):
        rk = self.some_rk()
        if rk is None:
            return self.op_insert()
        self.table.delete_entity(self.pk, rk, etag=self.etags[rk], match_condition=MatchConditions.IfNotModified)
        del self.model[rk]
        del self.etags[rk]

    def op_batch(self):
        size = self.rng.randrange(10, 101)
        chosen = set()
        ops = []
        staged = {}
        for _ in range(size):
            existing = self.some_rk() if self.rng.random() < 0.3 else None
            if existing is not None and existing not in chosen and self.rng.random() < 0.3:
                chosen.add(existing)
                ops.append(("delete", {"PartitionKey": self.pk, "RowKey": existing}))
                staged[existing] = None
                continue
            rk = existing if existing is not None and existing not in chosen else self.new_rk()
            chosen.add(rk)
            self.seq += 1
            e = {"PartitionKey": self.pk, "RowKey": rk, **props(self.rng, self.seq)}
            ops.append(("upsert", e, {"mode": UpdateMode.REPLACE}))
            staged[rk] = e
        results = self.table.submit_transaction(ops)
        for (op, e, *_), meta in zip(ops, results):
            rk = e["RowKey"]
            if staged[rk] is None:
                self.model.pop(rk, None)
                self.etags.pop(rk, None)
            else:
                self.model[rk] = staged[rk]
                self.etags[rk] = meta["etag"]

    def op_query(self):
        lo = self.some_rk() or "r"
        rows = self.table.query_entities(
            "PartitionKey eq @pk and RowKey ge @lo", parameters={"pk": self.pk, "lo": lo}, results_per_page=100
        )
        page = next(rows.by_page())
        got = [(e["RowKey"], comparable(e)) for e in page]
        expected = [(rk, comparable(self.model[rk])) for rk in sorted(self.model) if rk >= lo][:100]
        if got != expected:
            self.errors.append(f"query {self.pk} from {lo}: {len(got)} rows differ from the model ({len(expected)})")

    def op_counter(self):
        n = self.rng.randrange(COUNTERS)
        while time.monotonic() < self.deadline + 5:
            cur = self.table.get_entity("shared", f"k{n}")
            updated = {"PartitionKey": "shared", "RowKey": f"k{n}", "Count": cur["Count"] + 1}
            try:
                self.table.update_entity(
                    updated, mode=UpdateMode.REPLACE, etag=cur.metadata["etag"], match_condition=MatchConditions.IfNotModified
                )
            except ResourceModifiedError:
                self.conflicts += 1
                continue
            self.increments[n] += 1
            return
        self.errors.append(f"counter k{n}: no successful increment before the deadline")


def run_process(endpoint: str, indices: list, deadline_in: float, seed: int) -> dict:
    deadline = time.monotonic() + deadline_in
    clients = [Client(endpoint, i, deadline, seed * 1000 + i) for i in indices]
    threads = [threading.Thread(target=c.run) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "models": {c.pk: {rk: comparable(e) for rk, e in c.model.items()} for c in clients},
        "latencies": {k: [x for c in clients for x in c.latencies[k]] for k in MIX},
        "errors": [x for c in clients for x in c.errors],
        "conflicts": sum(c.conflicts for c in clients),
        "increments": [sum(c.increments[n] for c in clients) for n in range(COUNTERS)],
    }


def percentile(values: list, q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def verify(endpoint: str, models: dict, increments: list) -> list:
    table = client_for(endpoint)
    problems = []
    for pk, model in models.items():
        stored = {e["RowKey"]: comparable(e) for e in table.query_entities("PartitionKey eq @pk", parameters={"pk": pk})}
        if stored != model:
            lost = sorted(set(model) - set(stored))
            extra = sorted(set(stored) - set(model))
            changed = sorted(rk for rk in set(model) & set(stored) if model[rk] != stored[rk])
            problems.append(f"{pk}: lost {lost[:5]} ({len(lost)}), extra {extra[:5]} ({len(extra)}), changed {changed[:5]}")
    for n, count in enumerate(increments):
        got = table.get_entity("shared", f"k{n}")["Count"]
        if got != count:
            problems.append(f"counter k{n}: stored {got}, acknowledged increments {count}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", help="path of the strata binary to start (and restart)")
    ap.add_argument("--db", help="database file (default: a fresh temp file)")
    ap.add_argument("--endpoint", help="use an already running server instead of --strata")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--processes", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if bool(args.strata) == bool(args.endpoint):
        ap.error("give exactly one of --strata and --endpoint")

    tmp = tempfile.TemporaryDirectory()
    db = args.db or os.path.join(tmp.name, "load.db")
    log_path = os.path.join(tmp.name, "server.log")
    log = open(log_path, "ab")
    server = None
    if args.strata:
        port = free_port()
        server = start_server(args.strata, db, port, log)
        endpoint = f"http://127.0.0.1:{port}/{ACCOUNT}"
    else:
        endpoint = args.endpoint.rstrip("/")

    try:
        svc = TableServiceClient(endpoint=endpoint, credential=AzureNamedKeyCredential(ACCOUNT, KEY))
        svc.delete_table(TABLE)
        table = svc.create_table(TABLE)
        for n in range(COUNTERS):
            table.create_entity({"PartitionKey": "shared", "RowKey": f"k{n}", "Count": 0})

        groups = [list(range(args.clients))[p :: args.processes] for p in range(args.processes)]
        started = time.monotonic()
        with ProcessPoolExecutor(max_workers=args.processes) as pool:
            futures = [pool.submit(run_process, endpoint, g, args.duration, args.seed + i) for i, g in enumerate(groups) if g]
            results = [f.result() for f in futures]
        elapsed = time.monotonic() - started

        models = {pk: m for r in results for pk, m in r["models"].items()}
        errors = [e for r in results for e in r["errors"]]
        conflicts = sum(r["conflicts"] for r in results)
        increments = [sum(r["increments"][n] for r in results) for n in range(COUNTERS)]
        latencies = {k: [x for r in results for x in r["latencies"][k]] for k in MIX}
        all_lat = [x for v in latencies.values() for x in v]

        if server is not None:
            # SIGKILL: only what the server acknowledged and made durable may survive.
            server.send_signal(signal.SIGKILL)
            server.wait()
            server = start_server(args.strata, db, port, log)
        problems = verify(endpoint, models, increments)

        print(f"load: {args.clients} clients in {args.processes} processes for {elapsed:.1f} s against {endpoint}")
        print(f"{'op':8} {'count':>8} {'ops/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
        for kind, lat in list(latencies.items()) + [("all", all_lat)]:
            print(
                f"{kind:8} {len(lat):8} {len(lat) / elapsed:8.1f} {percentile(lat, 0.5) * 1e3:8.2f} "
                f"{percentile(lat, 0.99) * 1e3:8.2f} {max(lat, default=0) * 1e3:8.2f}"
            )
        rows = sum(len(m) for m in models.values())
        print(f"intended conflicts (412 on shared counters, retried): {conflicts}")
        print(f"verified after {'SIGKILL + restart' if args.strata else 'the run'}: {rows} rows in {len(models)} partitions, "
              f"{sum(increments)} counter increments")
        for e in errors[:20]:
            print(f"ERROR {e}")
        for p in problems[:20]:
            print(f"LOST {p}")
        print(f"errors: {len(errors)}, lost or wrong after restart: {len(problems)}")
        return 1 if errors or problems or not all_lat else 0
    finally:
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
        log.close()
        if server is not None and (server.returncode not in (0, None)):
            sys.stdout.write(open(log_path, errors="replace").read()[-4000:])


if __name__ == "__main__":
    sys.exit(main())
