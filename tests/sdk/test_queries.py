"""Queries: filters with parameters, select, top (results_per_page), continuation paging."""

import pytest
from azure.core.exceptions import HttpResponseError

PAGED = 2500


def fill(table, pk, count, start=0):
    """Inserts `count` entities in batches of 100 (the fastest path through the SDK)."""
    for base in range(start, start + count, 100):
        ops = [
            ("create", {"PartitionKey": pk, "RowKey": f"{i:05}", "N": i, "Even": i % 2 == 0, "Tag": f"t{i % 7}"})
            for i in range(base, min(base + 100, start + count))
        ]
        table.submit_transaction(ops)


@pytest.fixture(scope="module")
def paged_table(service):
    from conftest import unique_table_name

    name = unique_table_name("paged")
    client = service.create_table(name)
    fill(client, "A", PAGED // 2)
    fill(client, "B", PAGED - PAGED // 2, start=PAGED // 2)
    yield client
    service.delete_table(name)


def test_query_list_entities_pages_through_all_with_continuation(paged_table):
    pages = paged_table.list_entities(results_per_page=1000).by_page()
    seen = []
    sizes = []
    for page in pages:
        items = list(page)
        sizes.append(len(items))
        seen.extend((e["PartitionKey"], e["RowKey"]) for e in items)
    assert len(seen) == PAGED
    assert seen == sorted(seen)
    assert len(set(seen)) == PAGED
    assert all(s <= 1000 for s in sizes)
    assert len(sizes) >= 3


def test_query_default_page_is_at_most_1000(paged_table):
    first = next(paged_table.list_entities().by_page())
    assert len(list(first)) <= 1000


def test_query_continuation_token_resumes_after_last_entity(paged_table):
    pager = paged_table.list_entities(results_per_page=333).by_page()
    first = [e["RowKey"] for e in next(pager)]
    token = pager.continuation_token
    assert token is not None
    resumed = paged_table.list_entities(results_per_page=333).by_page(continuation_token=token)
    second = [e["RowKey"] for e in next(resumed)]
    assert first == [f"{i:05}" for i in range(333)]
    assert second == [f"{i:05}" for i in range(333, 666)]


def test_query_filter_with_parameters_pages_with_top(paged_table):
    flt = "PartitionKey eq @pk and N ge @lo and Even eq @even"
    params = {"pk": "B", "lo": 2000, "even": True}
    pages = paged_table.query_entities(flt, parameters=params, results_per_page=50).by_page()
    rows = []
    for page in pages:
        items = list(page)
        assert len(items) <= 50
        rows.extend(e["N"] for e in items)
    assert rows == list(range(2000, PAGED, 2))


def test_query_table_scan_filter_across_partitions(paged_table):
    got = [(e["PartitionKey"], e["N"]) for e in paged_table.query_entities("Tag eq 't3' and N lt 1300")]
    expected = [("A" if i < PAGED // 2 else "B", i) for i in range(1300) if i % 7 == 3]
    assert got == expected


def test_query_select_returns_only_named_properties(paged_table):
    items = list(paged_table.query_entities("PartitionKey eq 'A' and RowKey lt '00005'", select=["N"]))
    assert [e["N"] for e in items] == [0, 1, 2, 3, 4]
    for e in items:
        assert dict(e) == {"N": e["N"]}
        assert e.metadata["etag"]


def test_query_select_missing_property_is_absent_or_null(paged_table):
    items = list(paged_table.query_entities("PartitionKey eq 'A' and RowKey eq '00001'", select=["N", "Nope"]))
    assert len(items) == 1
    assert items[0].get("Nope") is None


def test_query_point_filter(paged_table):
    items = list(paged_table.query_entities("PartitionKey eq 'B' and RowKey eq '02000'"))
    assert [e["N"] for e in items] == [2000]


def test_query_row_key_range_and_or_not(paged_table):
    flt = "PartitionKey eq 'A' and ((RowKey ge '00010' and RowKey lt '00013') or RowKey eq '00100') and not (N eq 11)"
    assert [e["N"] for e in paged_table.query_entities(flt)] == [10, 12, 100]


def test_query_string_literal_with_quote(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r", "Name": "O'Brien"})
    assert [e["Name"] for e in table.query_entities("Name eq @n", parameters={"n": "O'Brien"})] == ["O'Brien"]


def test_query_empty_table_returns_nothing(table):
    assert list(table.query_entities("PartitionKey eq 'x'")) == []
    assert list(table.list_entities()) == []


def test_query_malformed_filter_is_bad_request(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    with pytest.raises(HttpResponseError) as err:
        list(table.query_entities("PartitionKey eq eq 'p'"))
    assert err.value.status_code == 400


def test_query_timestamp_filter(table):
    from datetime import datetime, timedelta, timezone

    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    since = datetime.now(timezone.utc) - timedelta(hours=1)
    assert len(list(table.query_entities("Timestamp ge @t", parameters={"t": since}))) == 1
