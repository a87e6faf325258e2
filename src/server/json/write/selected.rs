//! A row's object under `$select`: the service returns only the properties a `$select`
//! names, the system ones (PartitionKey, RowKey, Timestamp) included, beside the metadata
//! members of the response's level, and a named property the entity lacks as `null`.

use super::metadata_member::write_selected_metadata_member;
use super::plain::push_ascii;
use super::{EntityWriter, write_str};
use crate::model::{DateTime, PropertyName};
use crate::server::json::Metadata;
use crate::server::json::stamp::PARTITION_KEY_NAME;
use crate::table::RowRef;

/// The bit that marks the `at`th selected name as written, for the first 64 names.
pub(super) fn selected_bit(at: usize) -> Option<u64> {
    u32::try_from(at).ok().and_then(|at| 1_u64.checked_shl(at))
}

impl EntityWriter<'_> {
    /// Appends `{`, the metadata members and those of the system properties in `names`; the
    /// custom properties follow, each with a leading comma, and [`Self::close_selected`]
    /// ends the object.
    pub(super) fn write_selected_head(
        &mut self,
        out: &mut String,
        (partition_key, row_key): (&str, &str),
        timestamp: DateTime,
        names: &[&str],
    ) {
        let (metadata, links) = (self.metadata, self.links);
        self.begin_row(timestamp);
        out.push('{');
        if metadata != Metadata::None {
            if !self.in_feed {
                write_selected_metadata_member(out, links, names);
            }
            if metadata == Metadata::Full {
                self.write_full_metadata_members(out, (partition_key, row_key));
            } else {
                out.push_str("\"odata.etag\":");
                self.stamp.push_etag_json(out);
            }
        }
        if names.contains(&"PartitionKey") {
            out.push_str(PARTITION_KEY_NAME);
            write_str(out, partition_key);
        }
        if names.contains(&"RowKey") {
            out.push_str(",\"RowKey\":");
            write_str(out, row_key);
        }
        if names.contains(&"Timestamp") {
            if metadata == Metadata::Full {
                push_ascii(out, b",\"Timestamp@odata.type\":\"Edm.DateTime\"");
            }
            self.stamp.push_timestamp_member(out);
        }
    }

    /// Appends `,"name":null` for each custom property `names` selects that `row` lacks:
    /// the service answers such a `$select` with the property as `null` (recorded traffic
    /// of `azure-cosmosdb-table`: `$select=age,sex,xyz` gives `"xyz":null`). `names` are
    /// distinct (see `select_list`); `present` has bit `i` set ([`selected_bit`]) when the
    /// `i`th name was written, and a name past its bits is looked up again.
    pub(super) fn write_missing_selected(
        out: &mut String,
        names: &[&str],
        present: u64,
        row: &RowRef<'_>,
    ) {
        for (at, name) in names.iter().enumerate() {
            // Only a name that could be a custom property is one the row lacks: not a system
            // property (every row has those), an `odata.` member or an annotation.
            if PropertyName::check(name).is_err() {
                continue;
            }
            let found = match selected_bit(at) {
                Some(bit) => present & bit != 0,
                None => row
                    .properties
                    .frames()
                    .any(|frame| frame.is_ok_and(|frame| frame.name_bytes() == name.as_bytes())),
            };
            if !found {
                out.push(',');
                write_str(out, name);
                out.push_str(":null");
            }
        }
    }

    /// Ends an object begun at `start` by [`Self::write_selected_head`]: without metadata
    /// members its first member was written with the comma every later one needs.
    pub(super) fn close_selected(out: &mut String, start: usize) {
        if out.as_bytes().get(start + 1) == Some(&b',') {
            out.remove(start + 1);
        }
        out.push('}');
    }
}
