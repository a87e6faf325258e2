//! The `"odata.metadata":"<base>/$metadata#<table>/@Element",` member of an entity answered on
//! its own, kept per thread: single-entity responses mostly name the host and table the one
//! before named, and escaping the ~60-byte text cost each point read ~400 instructions.

use std::cell::RefCell;

use super::write_str_parts;
use crate::server::json::Links;

/// The member written last on a thread and what it was written from.
struct KeptMember {
    base: String,
    table: String,
    member: String,
}

thread_local! {
    static LAST: RefCell<KeptMember> = const {
        RefCell::new(KeptMember {
            base: String::new(),
            table: String::new(),
            member: String::new(),
        })
    };
}

/// Appends the `odata.metadata` member of an entity of `links.table` answered on its own.
pub(super) fn write_metadata_member(out: &mut String, links: &Links<'_>) {
    LAST.with(|cell| {
        let Ok(mut last) = cell.try_borrow_mut() else {
            write_member(out, links);
            return;
        };
        if last.base != links.base || last.table != links.table {
            let KeptMember {
                base,
                table,
                member,
            } = &mut *last;
            base.clear();
            base.push_str(links.base);
            table.clear();
            table.push_str(links.table);
            member.clear();
            write_member(member, links);
        }
        out.push_str(&last.member);
    });
}

/// Appends the `odata.metadata` member of an entity answered on its own under a `$select` of
/// `names`: the service names the projection after the entity type
/// (`…#<table>/@Element&$select=a,b`, recorded traffic), so the kept member does not serve.
pub(super) fn write_selected_metadata_member(out: &mut String, links: &Links<'_>, names: &[&str]) {
    out.push_str("\"odata.metadata\":");
    let names = names.join(",");
    write_str_parts(
        out,
        &[
            links.base,
            "/$metadata#",
            links.table,
            "/@Element&$select=",
            &names,
        ],
    );
    out.push(',');
}

/// Appends the member of `links`, escaped.
fn write_member(out: &mut String, links: &Links<'_>) {
    out.push_str("\"odata.metadata\":");
    write_str_parts(out, &[links.base, "/$metadata#", links.table, "/@Element"]);
    out.push(',');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_member_is_the_one_of_the_host_and_table_asked_for() {
        let links = |base, table| Links {
            base,
            account: "a",
            table,
        };
        for (base, table) in [
            ("http://h/a", "Items"),
            ("http://h/a", "Items"),
            ("http://h/a", "Other"),
            ("http://g/a", "Other"),
            ("http://h/a\"c", "Items"),
            ("http://h/a", "Items"),
        ] {
            let mut kept = String::from("{");
            write_metadata_member(&mut kept, &links(base, table));
            let mut fresh = String::from("{");
            write_member(&mut fresh, &links(base, table));
            assert_eq!(kept, fresh, "{base} {table}");
        }
        let mut escaped = String::new();
        write_metadata_member(&mut escaped, &links("http://h/a\"c", "T"));
        assert_eq!(
            escaped,
            r#""odata.metadata":"http://h/a\"c/$metadata#T/@Element","#
        );
    }
}
