"""Get and Set Table Service Properties: logging, metrics and CORS rules round-trip, sections
left out of a set are kept, and invalid settings are the service's 400."""

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import TableAnalyticsLogging, TableCorsRule, TableMetrics, TableRetentionPolicy


@pytest.fixture
def restore_properties(service):
    before = service.get_service_properties()
    yield
    service.set_service_properties(
        analytics_logging=before["analytics_logging"],
        hour_metrics=before["hour_metrics"],
        minute_metrics=before["minute_metrics"],
        cors=before["cors"],
    )


def test_service_properties_set_then_get_round_trips(service, restore_properties):
    service.set_service_properties(
        analytics_logging=TableAnalyticsLogging(
            read=True, write=False, delete=True, retention_policy=TableRetentionPolicy(enabled=True, days=3)
        ),
        hour_metrics=TableMetrics(
            enabled=True, include_apis=True, retention_policy=TableRetentionPolicy(enabled=True, days=7)
        ),
        minute_metrics=TableMetrics(enabled=False),
        cors=[
            TableCorsRule(
                ["https://a.example", "https://b.example"],
                ["GET", "PUT"],
                max_age_in_seconds=600,
                exposed_headers=["x-ms-meta-*"],
                allowed_headers=["x-ms-a", "x-ms-b"],
            )
        ],
    )
    got = service.get_service_properties()
    logging = got["analytics_logging"]
    assert (logging.read, logging.write, logging.delete) == (True, False, True)
    assert (logging.retention_policy.enabled, logging.retention_policy.days) == (True, 3)
    hour = got["hour_metrics"]
    assert (hour.enabled, hour.include_apis, hour.retention_policy.days) == (True, True, 7)
    assert got["minute_metrics"].enabled is False
    assert len(got["cors"]) == 1
    rule = got["cors"][0]
    assert rule.allowed_origins == ["https://a.example", "https://b.example"]
    assert rule.allowed_methods == ["GET", "PUT"]
    assert rule.max_age_in_seconds == 600
    assert rule.exposed_headers == ["x-ms-meta-*"]
    assert rule.allowed_headers == ["x-ms-a", "x-ms-b"]


def test_service_properties_sections_left_out_are_kept(service, restore_properties):
    service.set_service_properties(
        analytics_logging=TableAnalyticsLogging(read=True, write=True, delete=True),
        cors=[TableCorsRule(["*"], ["GET"], max_age_in_seconds=5)],
    )
    service.set_service_properties(
        hour_metrics=TableMetrics(enabled=True, include_apis=False, retention_policy=TableRetentionPolicy())
    )
    got = service.get_service_properties()
    assert got["analytics_logging"].read is True
    assert [rule.allowed_origins for rule in got["cors"]] == [["*"]]
    assert got["hour_metrics"].enabled is True
    service.set_service_properties(cors=[])
    assert service.get_service_properties()["cors"] == []


@pytest.mark.parametrize(
    "settings",
    [
        {"analytics_logging": TableAnalyticsLogging(retention_policy=TableRetentionPolicy(enabled=True, days=366))},
        {"cors": [TableCorsRule(["*"], ["GET"]) for _ in range(6)]},
        {"cors": [TableCorsRule(["*"], ["FETCH"])]},
    ],
    ids=["retention-over-365-days", "six-cors-rules", "unknown-cors-method"],
)
def test_service_properties_invalid_settings_are_400(service, restore_properties, settings, target):
    if target == "azurite":
        pytest.skip("Azurite does not validate service properties")
    before = service.get_service_properties()
    with pytest.raises(HttpResponseError) as err:
        service.set_service_properties(**settings)
    assert err.value.status_code == 400
    after = service.get_service_properties()
    assert len(after["cors"]) == len(before["cors"])
    assert after["analytics_logging"].retention_policy.days == before["analytics_logging"].retention_policy.days


def test_secondary_location_reads_the_same_data_and_refuses_writes(endpoint, credential, table, target):
    if target == "azurite":
        pytest.skip("Azurite has no secondary location")
    from azure.data.tables import TableClient

    table.upsert_entity({"PartitionKey": "p", "RowKey": "r", "N": 1})
    secondary = TableClient(endpoint=endpoint + "-secondary", table_name=table.table_name, credential=credential)
    assert secondary.get_entity("p", "r")["N"] == 1
    with pytest.raises(HttpResponseError) as err:
        secondary.upsert_entity({"PartitionKey": "p", "RowKey": "s"})
    assert err.value.status_code == 403
    # The service's words, which the official suite's test_table_client_location_mode checks.
    assert "Write operations are not allowed." in str(err.value)


def test_service_properties_account_sas_reads_with_r_and_sets_only_with_w(endpoint, credential, service, target):
    if target == "azurite":
        pytest.skip("Azurite does not check account SAS scopes on service properties")
    from datetime import datetime, timedelta, timezone

    from azure.core.credentials import AzureSasCredential
    from azure.data.tables import AccountSasPermissions, ResourceTypes, TableServiceClient, generate_account_sas

    def client(**permission):
        sas = generate_account_sas(
            credential,
            resource_types=ResourceTypes(service=True),
            permission=AccountSasPermissions(**permission),
            expiry=datetime.now(timezone.utc) + timedelta(hours=1),
        )
        return TableServiceClient(endpoint=endpoint, credential=AzureSasCredential(sas))

    reader = client(read=True)
    assert reader.get_service_properties()["cors"] == service.get_service_properties()["cors"]
    with pytest.raises(HttpResponseError) as err:
        reader.set_service_properties(cors=[])
    assert err.value.status_code == 403
    client(write=True).set_service_properties(cors=[])


def test_service_stats_through_the_sdks_secondary_host(service, target):
    # The SDK swaps the endpoint's host for "<host>/<account>-secondary", so a path-style
    # endpoint yields /<account>-secondary/<account>/?comp=stats, signed as the primary path.
    if target == "azurite":
        pytest.skip("Azurite refuses the SDK's secondary form of a path-style endpoint")
    stats = service.get_service_stats()
    assert stats["geo_replication"]["status"] == "live"
    assert stats["geo_replication"]["last_sync_time"] is not None
