//! The head of a row's object under `$select`: the service returns only the properties a
//! `$select` names, the system ones (PartitionKey, RowKey, Timestamp) included, beside the
//! metadata members of the response's level.

use super::metadata_member::write_metadata_member;
use super::plain::push_ascii;
use super::{EntityWriter, write_str};
use crate::model::DateTime;
use crate::server::json::Metadata;
use crate::server::json::stamp::PARTITION_KEY_NAME;

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
                write_metadata_member(out, links);
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

    /// Ends an object begun at `start` by [`Self::write_selected_head`]: without metadata
    /// members its first member was written with the comma every later one needs.
    pub(super) fn close_selected(out: &mut String, start: usize) {
        if out.as_bytes().get(start + 1) == Some(&b',') {
            out.remove(start + 1);
        }
        out.push('}');
    }
}
