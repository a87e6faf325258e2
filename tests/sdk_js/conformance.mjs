// The official JavaScript SDK (@azure/data-tables, pinned in package.json) against a table
// endpoint: every operation of issue 5 through a second official client, so strata's wire
// format is checked by a parser other than the Python SDK's.
//
//   node tests/sdk_js/conformance.mjs http://127.0.0.1:10002/devstoreaccount1
//
// Prints one line per check and exits non-zero if any failed.

import assert from "node:assert/strict";
import {
  AzureNamedKeyCredential,
  AzureSASCredential,
  TableClient,
  TableServiceClient,
  TableTransaction,
  generateAccountSas,
  generateTableSas,
  odata,
} from "@azure/data-tables";

const endpoint = process.argv[2];
if (!endpoint) {
  console.error("usage: node conformance.mjs <table endpoint>");
  process.exit(2);
}
const credential = new AzureNamedKeyCredential(
  "devstoreaccount1",
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
);
const options = { allowInsecureConnection: true };
const service = new TableServiceClient(endpoint, credential, options);
const tableName = `js${Date.now()}`;
const table = new TableClient(endpoint, tableName, credential, options);

let failures = 0;
async function check(name, body) {
  try {
    await body();
    console.log(`ok   ${name}`);
  } catch (error) {
    failures += 1;
    console.log(`FAIL ${name}: ${error.stack ?? error}`);
  }
}

// Runs `body`, which must fail with HTTP `status` and (when given) service error `code`.
async function rejects(body, status, code) {
  let caught;
  try {
    await body();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught, `expected HTTP ${status}${code ? ` ${code}` : ""}, got success`);
  assert.equal(caught.statusCode, status, `${caught.message}`);
  if (code) {
    // This SDK leaves `error.code` unset for table errors (against Azurite too); the service's
    // code is in the message, which is the error body.
    assert.equal(caught.code ?? JSON.parse(caught.message)["odata.error"].code, code, caught.message);
  }
  return caught;
}

async function collect(iterable) {
  const rows = [];
  for await (const row of iterable) {
    rows.push(row);
  }
  return rows;
}

function sasClient(sas) {
  return new TableClient(endpoint, tableName, new AzureSASCredential(sas), options);
}

const when = new Date("2024-01-02T03:04:05.678Z");
const guid = "c9da6455-213d-42c9-9a79-3e9149a57833";
const typed = {
  partitionKey: "p1",
  rowKey: "r1",
  text: "héllo \"wörld\" \u{1F600}",
  int32: 42,
  int64: { value: "9007199254740993", type: "Int64" },
  double: 1.5,
  wholeDouble: { value: "3", type: "Double" },
  nan: { value: "NaN", type: "Double" },
  infinity: { value: "Infinity", type: "Double" },
  negativeInfinity: { value: "-Infinity", type: "Double" },
  flag: true,
  when,
  id: { value: guid, type: "Guid" },
  bytes: new Uint8Array([0, 1, 2, 253, 254, 255]),
  empty: "",
};

await check("create table; creating it again is swallowed by the SDK", async () => {
  await service.createTable(tableName);
  await service.createTable(tableName);
});

await check("a table name the service rejects is a 400", async () => {
  await rejects(() => service.createTable("1starts-with-digit"), 400);
});

await check("insert returns an ETag; a duplicate insert is 409 EntityAlreadyExists", async () => {
  const created = await table.createEntity(typed);
  assert.match(created.etag, /^W\/"datetime'\d{4}-\d\d-\d\dT\d\d%3A\d\d%3A\d\d\.\d{7}Z'"$/);
  await rejects(() => table.createEntity(typed), 409, "EntityAlreadyExists");
});

await check("every EDM type round-trips", async () => {
  const entity = await table.getEntity("p1", "r1");
  assert.equal(entity.text, typed.text);
  assert.equal(entity.int32, 42);
  assert.equal(String(entity.int64), "9007199254740993");
  assert.equal(entity.double, 1.5);
  assert.equal(entity.wholeDouble, 3);
  // The SDK hands the Double specials back as their strings (against Azurite too).
  assert.equal(entity.nan, "NaN");
  assert.equal(entity.infinity, "Infinity");
  assert.equal(entity.negativeInfinity, "-Infinity");
  assert.equal(entity.flag, true);
  assert.equal(entity.when.toISOString(), when.toISOString());
  assert.deepEqual(entity.id, { value: guid, type: "Guid" });
  assert.deepEqual(new Uint8Array(entity.bytes), typed.bytes);
  assert.equal(entity.empty, "");
  assert.match(entity.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
});

await check("the raw types are annotated as the service writes them", async () => {
  const raw = await table.getEntity("p1", "r1", { disableTypeConversion: true });
  assert.deepEqual(raw.int64, { value: "9007199254740993", type: "Int64" });
  // A whole Double is written as a bare JSON number, as the service does; the SDK then
  // guesses Int32 for it (against Azurite too), so only the value is checked.
  assert.equal(raw.wholeDouble.value, "3");
  assert.deepEqual(raw.double, { value: "1.5", type: "Double" });
  assert.deepEqual(raw.nan, { value: "NaN", type: "Double" });
  assert.equal(raw.when.type, "DateTime");
  assert.equal(new Date(raw.when.value).toISOString(), when.toISOString());
  assert.deepEqual(raw.bytes, { value: "AAEC/f7/", type: "Binary" });
  assert.deepEqual(raw.int32, { value: "42", type: "Int32" });
});

await check("typed filters match: DateTime, Guid, Int64, Binary, Boolean, Double", async () => {
  const filters = [
    odata`when eq ${when}`,
    `id eq guid'${guid}'`,
    "int64 eq 9007199254740993L",
    "bytes eq X'000102fdfeff'",
    "flag eq true",
    "double gt 1.25 and double lt 1.75",
  ];
  for (const filter of filters) {
    const rows = await collect(table.listEntities({ queryOptions: { filter } }));
    assert.equal(rows.length, 1, filter);
  }
});

await check("a point read with select returns only the selected properties", async () => {
  const entity = await table.getEntity("p1", "r1", { queryOptions: { select: ["int32", "text"] } });
  assert.equal(entity.int32, 42);
  assert.equal(entity.text, typed.text);
  assert.equal(entity.double, undefined);
  assert.equal(entity.partitionKey, undefined);
  assert.ok(entity.etag);
});

await check("a missing entity is 404 ResourceNotFound", async () => {
  await rejects(() => table.getEntity("p1", "missing"), 404, "ResourceNotFound");
});

await check("upsert (merge and replace), update with and without ETag", async () => {
  await table.upsertEntity({ partitionKey: "p2", rowKey: "a", first: 1 }, "Replace");
  await table.upsertEntity({ partitionKey: "p2", rowKey: "a", second: 2 }, "Merge");
  let entity = await table.getEntity("p2", "a");
  assert.equal(entity.first, 1);
  assert.equal(entity.second, 2);
  await table.upsertEntity({ partitionKey: "p2", rowKey: "a", third: 3 }, "Replace");
  entity = await table.getEntity("p2", "a");
  assert.equal(entity.first, undefined);
  assert.equal(entity.third, 3);
  const updated = await table.updateEntity(
    { partitionKey: "p2", rowKey: "a", fourth: 4 },
    "Merge",
    { etag: entity.etag },
  );
  assert.notEqual(updated.etag, entity.etag);
  await table.updateEntity({ partitionKey: "p2", rowKey: "a", fifth: 5 }, "Replace");
  entity = await table.getEntity("p2", "a");
  assert.equal(entity.third, undefined);
  assert.equal(entity.fifth, 5);
});

await check("a stale ETag is 412 UpdateConditionNotSatisfied on update and delete", async () => {
  const stale = (await table.getEntity("p2", "a")).etag;
  await table.updateEntity({ partitionKey: "p2", rowKey: "a", sixth: 6 }, "Merge");
  await rejects(
    () => table.updateEntity({ partitionKey: "p2", rowKey: "a" }, "Replace", { etag: stale }),
    412,
    "UpdateConditionNotSatisfied",
  );
  await rejects(() => table.deleteEntity("p2", "a", { etag: stale }), 412, "UpdateConditionNotSatisfied");
});

await check("a weak ETag of another form is 412, a strong or unquoted one 400; neither writes", async () => {
  const before = (await table.getEntity("p2", "a")).etag;
  for (const etag of ['W/"wrong"', 'w/"wrong"']) {
    await rejects(() => table.updateEntity({ partitionKey: "p2", rowKey: "a" }, "Replace", { etag }), 412, "UpdateConditionNotSatisfied");
    await rejects(() => table.deleteEntity("p2", "a", { etag }), 412, "UpdateConditionNotSatisfied");
  }
  for (const etag of ['"wrong"', "wrong"]) {
    await rejects(() => table.updateEntity({ partitionKey: "p2", rowKey: "a" }, "Merge", { etag }), 400, "InvalidInput");
  }
  const batch = new TableTransaction();
  batch.updateEntity({ partitionKey: "p2", rowKey: "a" }, "Merge", { etag: 'W/"wrong"' });
  await rejects(() => table.submitTransaction(batch.actions), 412);
  assert.equal((await table.getEntity("p2", "a")).etag, before);
});

await check("updating a missing entity is 404; delete then delete again is 404", async () => {
  await rejects(() => table.updateEntity({ partitionKey: "p2", rowKey: "none" }, "Merge"), 404);
  await table.deleteEntity("p2", "a");
  await rejects(() => table.deleteEntity("p2", "a"), 404, "ResourceNotFound");
});

await check("invalid keys and oversized entities are 400", async () => {
  await rejects(() => table.createEntity({ partitionKey: "a/b", rowKey: "r" }), 400);
  await rejects(() => table.createEntity({ partitionKey: "p", rowKey: "r#" }), 400);
  // A string property may hold 32 Ki UTF-16 units; 20 of 30,000 exceed the 1 MiB entity.
  const big = { partitionKey: "p", rowKey: "big" };
  for (let i = 0; i < 20; i += 1) {
    big[`s${i}`] = "x".repeat(30000);
  }
  await rejects(() => table.createEntity(big), 400);
  await rejects(() => table.createEntity({ partitionKey: "p", rowKey: "long", s: "x".repeat(40000) }), 400);
  await rejects(() => table.getEntity("p", "big"), 404);
});

await check("a Double beyond the Double range is 400 InvalidInput; the named infinities are stored", async () => {
  const huge = { value: "1.797693134862316e308", type: "Double" };
  await rejects(() => table.createEntity({ partitionKey: "p", rowKey: "huge", d: huge }), 400, "InvalidInput");
  await rejects(() => table.getEntity("p", "huge"), 404);
  await table.createEntity({ partitionKey: "p", rowKey: "inf", d: { value: "-Infinity", type: "Double" } });
  // This SDK hands an annotated Double special back as its wire string.
  assert.equal(Number((await table.getEntity("p", "inf")).d), -Infinity);
  await table.deleteEntity("p", "inf");
});

await check("a body over 4 MiB is 413 RequestBodyTooLarge, not a reset connection", async () => {
  // The client writes the whole body before it reads the answer: the 413 reaches it only if
  // the server reads the refused body instead of closing on it.
  const huge = { partitionKey: "p", rowKey: "huge" };
  for (let i = 0; i < 140; i += 1) {
    huge[`s${i}`] = "x".repeat(32 * 1024);
  }
  await rejects(() => table.createEntity(huge), 413, "RequestBodyTooLarge");
  const batch = new TableTransaction();
  for (let i = 0; i < 40; i += 1) {
    batch.createEntity({ partitionKey: "huge", rowKey: String(i), a: "a".repeat(32 * 1024), b: "b".repeat(32 * 1024), c: "c".repeat(32 * 1024) });
  }
  await rejects(() => table.submitTransaction(batch.actions), 413);
  await rejects(() => table.getEntity("p", "huge"), 404);
});

await check("a batch of 100 inserts commits; its sub-responses are 204", async () => {
  const batch = new TableTransaction();
  for (let i = 0; i < 100; i += 1) {
    batch.createEntity({ partitionKey: "batch", rowKey: String(i).padStart(4, "0"), n: i, group: `g${i % 3}` });
  }
  const result = await table.submitTransaction(batch.actions);
  assert.equal(result.status, 202);
  assert.equal(result.subResponses.length, 100);
  assert.ok(result.subResponses.every((r) => r.status === 204));
});

await check("a failing batch names its failing operation and changes nothing", async () => {
  const batch = new TableTransaction();
  batch.createEntity({ partitionKey: "batch", rowKey: "new-1" });
  batch.createEntity({ partitionKey: "batch", rowKey: "0001" });
  const error = await rejects(() => table.submitTransaction(batch.actions), 409, "EntityAlreadyExists");
  assert.match(error.message, /^1:/m);
  await rejects(() => table.getEntity("batch", "new-1"), 404);
});

await check("a mixed batch: upsert, update, delete", async () => {
  const batch = new TableTransaction();
  batch.upsertEntity({ partitionKey: "batch", rowKey: "0001", extra: 1 }, "Merge");
  batch.updateEntity({ partitionKey: "batch", rowKey: "0003", n: 3, replaced: true }, "Replace");
  batch.deleteEntity("batch", "0002");
  const result = await table.submitTransaction(batch.actions);
  assert.deepEqual(result.subResponses.map((r) => r.status), [204, 204, 204]);
  assert.equal((await table.getEntity("batch", "0001")).extra, 1);
  assert.equal((await table.getEntity("batch", "0003")).replaced, true);
  await rejects(() => table.getEntity("batch", "0002"), 404);
});

await check("a filtered query pages with continuation tokens and loses no row", async () => {
  const pages = [];
  const iterator = table
    .listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"batch"} and group eq ${"g1"}` } })
    .byPage({ maxPageSize: 7 });
  for await (const page of iterator) {
    pages.push(page.map((e) => e.n));
  }
  const rows = pages.flat();
  assert.equal(rows.length, 33);
  assert.deepEqual(rows, [...rows].sort((a, b) => a - b));
  assert.ok(pages.length >= 5);
  assert.ok(pages.every((p) => p.length <= 7));
});

await check("a page resumed from its continuation token continues after the last row", async () => {
  const query = { queryOptions: { filter: "PartitionKey eq 'batch' and n ge 10", select: ["n"] } };
  const first = (await table.listEntities(query).byPage({ maxPageSize: 5 }).next()).value;
  assert.equal(first.length, 5);
  assert.ok(first.continuationToken);
  assert.deepEqual(Object.keys(first[0]).filter((k) => !["etag", "partitionKey", "rowKey", "timestamp"].includes(k)), ["n"]);
  const second = (
    await table.listEntities(query).byPage({ maxPageSize: 5, continuationToken: first.continuationToken }).next()
  ).value;
  assert.deepEqual(second.map((e) => e.n), [15, 16, 17, 18, 19]);
});

await check("an empty filter is no filter: every row and every table comes back", async () => {
  const all = await collect(table.listEntities());
  assert.ok(all.length > 0);
  assert.equal((await collect(table.listEntities({ queryOptions: { filter: "" } }))).length, all.length);
  const tables = await collect(service.listTables({ queryOptions: { filter: "" } }));
  assert.ok(tables.some((t) => t.name === tableName));
});

await check("query tables with a filter and with paging", async () => {
  for (let i = 0; i < 3; i += 1) {
    await service.createTable(`${tableName}x${i}`);
  }
  const named = await collect(service.listTables({ queryOptions: { filter: odata`TableName eq ${tableName}` } }));
  assert.deepEqual(named.map((t) => t.name), [tableName]);
  const pages = [];
  for await (const page of service.listTables().byPage({ maxPageSize: 2 })) {
    pages.push(page.map((t) => t.name));
  }
  const ours = pages.flat().filter((name) => name.startsWith(tableName));
  assert.equal(ours.length, 4);
  assert.ok(pages.every((p) => p.length <= 2));
  for (let i = 0; i < 3; i += 1) {
    await service.deleteTable(`${tableName}x${i}`);
  }
});

await check("stored access policies round-trip", async () => {
  const policy = {
    id: "readers",
    accessPolicy: { permission: "r", start: new Date("2024-01-01T00:00:00Z"), expiry: new Date("2099-01-01T00:00:00Z") },
  };
  await table.setAccessPolicy([policy]);
  const stored = await table.getAccessPolicy();
  assert.equal(stored.length, 1);
  assert.equal(stored[0].id, "readers");
  assert.equal(stored[0].accessPolicy.permission, "r");
  assert.equal(new Date(stored[0].accessPolicy.expiry).toISOString(), "2099-01-01T00:00:00.000Z");
});

await check("keys with URL-special characters round-trip through SharedKey and SAS clients", async () => {
  const sas = generateTableSas(tableName, credential, {
    permissions: { query: true, add: true, update: true, delete: true },
    expiresOn: new Date(Date.now() + 3600e3),
  });
  const keys = ["quote'd", "sp ace", "pct%25", "unicodé✓", "plus+amp&eq=", "colon:semi;", "paren()", "comma,x", "star*", ""];
  for (const client of [table, sasClient(sas)]) {
    for (const key of keys) {
      await client.upsertEntity({ partitionKey: `k${key}`, rowKey: key, v: 1 }, "Merge");
      assert.equal((await client.getEntity(`k${key}`, key)).v, 1, key);
      await client.updateEntity({ partitionKey: `k${key}`, rowKey: key, v: 2 }, "Merge");
      const found = await collect(
        client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${`k${key}`} and RowKey eq ${key}` } }),
      );
      assert.deepEqual(found.map((e) => e.v), [2], key);
      await client.deleteEntity(`k${key}`, key);
    }
  }
});

await check("a table SAS limited to one PartitionKey is refused outside it", async () => {
  const sas = generateTableSas(tableName, credential, {
    permissions: { query: true },
    expiresOn: new Date(Date.now() + 3600e3),
    startPartitionKey: "p1",
    endPartitionKey: "p1",
  });
  const client = sasClient(sas);
  assert.equal((await client.getEntity("p1", "r1")).int32, 42);
  await rejects(() => client.getEntity("batch", "0001"), 403);
  await rejects(() => client.createEntity({ partitionKey: "p1", rowKey: "sas" }), 403);
});

await check("a table SAS with add permission inserts; one naming a stored policy reads", async () => {
  const add = generateTableSas(tableName, credential, {
    permissions: { add: true },
    expiresOn: new Date(Date.now() + 3600e3),
  });
  await sasClient(add).createEntity({ partitionKey: "sas", rowKey: "added" });
  const byPolicy = generateTableSas(tableName, credential, { identifier: "readers" });
  assert.equal((await sasClient(byPolicy).getEntity("sas", "added")).rowKey, "added");
});

await check("an expired SAS and a wrong key are 403 AuthenticationFailed", async () => {
  const expired = generateTableSas(tableName, credential, {
    permissions: { query: true },
    expiresOn: new Date(Date.now() - 3600e3),
  });
  await rejects(() => sasClient(expired).getEntity("p1", "r1"), 403, "AuthenticationFailed");
  const wrong = new AzureNamedKeyCredential("devstoreaccount1", Buffer.from("not the key").toString("base64"));
  await rejects(() => new TableClient(endpoint, tableName, wrong, options).getEntity("p1", "r1"), 403, "AuthenticationFailed");
});

await check("an account SAS lists tables", async () => {
  const sas = generateAccountSas(credential, {
    permissions: { list: true, query: true },
    resourceTypes: "sco",
    expiresOn: new Date(Date.now() + 3600e3),
  });
  const client = new TableServiceClient(endpoint, new AzureSASCredential(sas), options);
  const named = await collect(client.listTables({ queryOptions: { filter: odata`TableName eq ${tableName}` } }));
  assert.equal(named.length, 1);
});

await check("service properties: a set keeps the sections it leaves out; six CORS rules are 400", async () => {
  await service.setProperties({
    hourMetrics: { version: "1.0", enabled: true, includeAPIs: false, retentionPolicy: { enabled: true, days: 5 } },
    cors: [{ allowedOrigins: "https://a.example", allowedMethods: "GET,PUT", maxAgeInSeconds: 60, exposedHeaders: "", allowedHeaders: "x-ms-*" }],
  });
  await service.setProperties({
    logging: { version: "1.0", read: true, write: false, delete: true, retentionPolicy: { enabled: false } },
  });
  const got = await service.getProperties();
  assert.equal(got.logging.read, true);
  assert.equal(got.hourMetrics.retentionPolicy.days, 5);
  assert.deepEqual(got.cors.map((rule) => rule.allowedMethods), ["GET,PUT"]);
  const rule = { allowedOrigins: "*", allowedMethods: "GET", maxAgeInSeconds: 1, exposedHeaders: "", allowedHeaders: "" };
  await rejects(() => service.setProperties({ cors: Array(6).fill(rule) }), 400, "InvalidXmlDocument");
  await service.setProperties({ cors: [] });
  assert.deepEqual((await service.getProperties()).cors, []);
});

await check("service stats: the secondary is this file, replication live; the secondary refuses writes", async () => {
  const stats = await service.getStatistics();
  assert.equal(stats.geoReplication.status, "live");
  assert.ok(Math.abs(new Date(stats.geoReplication.lastSyncTime) - Date.now()) < 600e3);
  const secondary = new TableClient(`${endpoint}-secondary`, tableName, credential, options);
  assert.equal((await secondary.getEntity("p1", "r1")).int32, 42);
  await rejects(() => secondary.upsertEntity({ partitionKey: "p1", rowKey: "secondary" }), 403);
});

await check("delete table; its entities are gone with it", async () => {
  await service.deleteTable(tableName);
  await rejects(() => table.getEntity("p1", "r1"), 404);
});

console.log(failures === 0 ? "all checks passed" : `${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
