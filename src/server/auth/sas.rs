//! Shared access signatures: account SAS (`ss`, `srt`) and table SAS (`tn`), with their
//! permissions, validity window, PartitionKey/RowKey ranges and stored access policies.
//!
//! Table SAS string-to-sign:
//! `sp\nst\nse\n/table/{account}/{lowercase tn}\nsi\nsip\nspr\nsv\nspk\nsrk\nepk\nerk`.
//! Account SAS string-to-sign: `{account}\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n` (versions
//! from 2020-12-06 add an encryption-scope line; both forms are accepted).

use super::shared_key::verify;
use crate::model::DateTime;
use crate::server::acl::AccessPolicy;
use crate::server::error::{Result, ServerError};

/// What an operation needs from a SAS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read entities (`r`).
    Read,
    /// Insert entities (`a`).
    Add,
    /// Replace or merge entities (`u`).
    Update,
    /// Insert-or-replace / insert-or-merge (`a` and `u`).
    Upsert,
    /// Delete entities (`d`).
    Delete,
    /// List tables (account SAS `l`).
    ListTables,
    /// Create a table (account SAS `c` or `w`).
    CreateTable,
    /// Delete a table (account SAS `d`).
    DeleteTable,
    /// Get service properties or stats (account SAS with resource type `s`, `r`).
    ServiceRead,
    /// Set service properties (account SAS with resource type `s`, `w`).
    ServiceWrite,
    /// Anything that needs the account key (table ACLs).
    KeyOnly,
}

/// A PartitionKey/RowKey range, both ends inclusive; absent ends are open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyRange {
    /// `spk`.
    pub start_pk: Option<String>,
    /// `srk` (only meaningful with `spk`).
    pub start_rk: Option<String>,
    /// `epk`.
    pub end_pk: Option<String>,
    /// `erk` (only meaningful with `epk`).
    pub end_rk: Option<String>,
}

impl KeyRange {
    /// Whether the entity `(pk, rk)` lies inside the range, comparing (PartitionKey, RowKey)
    /// pairs ordinally.
    #[must_use]
    pub fn contains(&self, pk: &str, rk: &str) -> bool {
        let after_start = match (&self.start_pk, &self.start_rk) {
            (None, _) => true,
            (Some(spk), None) => pk >= spk.as_str(),
            (Some(spk), Some(srk)) => (pk, rk) >= (spk.as_str(), srk.as_str()),
        };
        let before_end = match (&self.end_pk, &self.end_rk) {
            (None, _) => true,
            (Some(epk), None) => pk <= epk.as_str(),
            (Some(epk), Some(erk)) => (pk, rk) <= (epk.as_str(), erk.as_str()),
        };
        after_start && before_end
    }

    /// Whether the range limits anything.
    #[must_use]
    pub const fn is_unbounded(&self) -> bool {
        self.start_pk.is_none() && self.end_pk.is_none()
    }
}

/// Which kind of SAS a request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SasScope {
    /// An account SAS: services (`ss`) and resource types (`srt`).
    Account {
        /// Resource types: `s` service, `c` container (tables), `o` object (entities).
        resource_types: String,
    },
    /// A table SAS for one table (lower-cased).
    Table {
        /// The table it grants, lower-cased.
        table: String,
    },
}

/// A verified SAS: what it grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sas {
    /// Account or table scope.
    pub scope: SasScope,
    /// The permission letters.
    pub permissions: String,
    /// The key range (table SAS only; unbounded otherwise).
    pub range: KeyRange,
}

/// Reads the SAS parameters out of `param`, checks the signature against `key` and the
/// validity window against `now`. `policy` resolves a stored access policy id of a table.
///
/// # Errors
/// [`ServerError::AuthenticationFailed`] for a missing field, a bad signature, a SAS not yet
/// valid or expired, or an unknown policy id.
pub fn verify_sas<'q>(
    param: impl Fn(&str) -> Option<&'q str>,
    account: &str,
    key: &[u8],
    now: DateTime,
    policy: impl Fn(&str, &str) -> Result<Option<AccessPolicy>>,
) -> Result<Sas> {
    let fail = |reason: &str| ServerError::AuthenticationFailed {
        reason: reason.to_owned(),
    };
    let get = |name: &str| param(name).unwrap_or("");
    let signature = param("sig").ok_or_else(|| fail("the SAS has no signature"))?;
    let (scope, mut permissions, mut start, mut expiry);
    if let Some(services) = param("ss") {
        let base = format!(
            "{account}\n{}\n{services}\n{}\n{}\n{}\n{}\n{}\n{}\n",
            get("sp"),
            get("srt"),
            get("st"),
            get("se"),
            get("sip"),
            get("spr"),
            get("sv"),
        );
        let with_scope = format!("{base}\n");
        if !verify(key, &base, signature) && !verify(key, &with_scope, signature) {
            return Err(fail("the SAS signature does not match"));
        }
        // Checked once the signature holds, as the service does: an unsigned guess learns
        // nothing of what a SAS grants.
        if !services.contains('t') {
            return Err(ServerError::AuthorizationServiceMismatch {
                reason: format!("the account SAS grants the services {services:?}, not t (table)"),
            });
        }
        scope = SasScope::Account {
            resource_types: get("srt").to_owned(),
        };
        permissions = get("sp").to_owned();
        start = param("st").map(str::to_owned);
        expiry = param("se").map(str::to_owned);
    } else {
        let table = param("tn")
            .ok_or_else(|| fail("the SAS names no table (tn) and no services (ss)"))?
            .to_ascii_lowercase();
        let message = format!(
            "{}\n{}\n{}\n/table/{account}/{table}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
            get("sp"),
            get("st"),
            get("se"),
            get("si"),
            get("sip"),
            get("spr"),
            get("sv"),
            get("spk"),
            get("srk"),
            get("epk"),
            get("erk"),
        );
        if !verify(key, &message, signature) {
            return Err(fail("the SAS signature does not match"));
        }
        permissions = get("sp").to_owned();
        start = param("st").map(str::to_owned);
        expiry = param("se").map(str::to_owned);
        if let Some(id) = param("si") {
            let stored = policy(&table, id)?
                .ok_or_else(|| fail("the SAS names a stored access policy that does not exist"))?;
            // A field may be given by the SAS or by the policy, not both (the service's rule).
            if stored.permission.is_some() && !permissions.is_empty()
                || stored.start.is_some() && start.is_some()
                || stored.expiry.is_some() && expiry.is_some()
            {
                return Err(fail(
                    "the SAS repeats a field its stored access policy already sets",
                ));
            }
            permissions = stored.permission.unwrap_or(permissions);
            start = stored.start.or(start);
            expiry = stored.expiry.or(expiry);
        }
        scope = SasScope::Table { table };
    }
    let parse_time = |text: &str, what: &str| {
        DateTime::parse(text).map_err(|_| fail(&format!("the SAS {what} time is malformed")))
    };
    let expiry = expiry.ok_or_else(|| fail("the SAS has no expiry time"))?;
    if now > parse_time(&expiry, "expiry")? {
        return Err(fail("the SAS has expired"));
    }
    if let Some(start) = start
        && now < parse_time(&start, "start")?
    {
        return Err(fail("the SAS is not valid yet"));
    }
    if param("spr").is_some_and(|protocols| !protocols.split(',').any(|p| p == "http")) {
        return Err(fail("the SAS does not allow plain HTTP"));
    }
    let range = match scope {
        SasScope::Table { .. } => KeyRange {
            start_pk: param("spk").map(str::to_owned),
            start_rk: param("srk").map(str::to_owned),
            end_pk: param("epk").map(str::to_owned),
            end_rk: param("erk").map(str::to_owned),
        },
        SasScope::Account { .. } => KeyRange::default(),
    };
    Ok(Sas {
        scope,
        permissions,
        range,
    })
}

impl Sas {
    /// Checks that this SAS grants `access` on `table` (if the operation has one) for the
    /// entity `key` (if the operation names one).
    ///
    /// # Errors
    /// [`ServerError::AuthorizationPermissionMismatch`] naming what is not granted, or
    /// [`ServerError::AuthorizationResourceTypeMismatch`] for an account SAS's resource types.
    pub fn authorize(
        &self,
        access: Access,
        table: Option<&str>,
        key: Option<(&str, &str)>,
    ) -> Result<()> {
        let deny = |reason: String| ServerError::AuthorizationPermissionMismatch { reason };
        let has = |letter: char| self.permissions.contains(letter);
        let entity_level = matches!(
            access,
            Access::Read | Access::Add | Access::Update | Access::Upsert | Access::Delete
        );
        match &self.scope {
            SasScope::Table { table: granted } => {
                if !entity_level {
                    return Err(deny("a table SAS grants entity operations only".to_owned()));
                }
                match table {
                    Some(table) if table.eq_ignore_ascii_case(granted) => {}
                    _ => return Err(deny(format!("the SAS grants only table {granted:?}"))),
                }
            }
            SasScope::Account { resource_types } => {
                let needed = match access {
                    Access::KeyOnly => {
                        return Err(deny("this operation needs the account key".to_owned()));
                    }
                    Access::ListTables | Access::CreateTable | Access::DeleteTable => 'c',
                    Access::ServiceRead | Access::ServiceWrite => 's',
                    _ => 'o',
                };
                if !resource_types.contains(needed) {
                    return Err(ServerError::AuthorizationResourceTypeMismatch {
                        reason: format!(
                            "the SAS resource types {resource_types:?} lack {needed:?}"
                        ),
                    });
                }
            }
        }
        let granted = match access {
            Access::Read => has('r'),
            Access::Add => has('a') || self.is_account() && has('w'),
            Access::Update => has('u') || self.is_account() && has('w'),
            Access::Upsert => has('a') && has('u') || self.is_account() && has('w'),
            Access::Delete | Access::DeleteTable => has('d'),
            Access::ListTables => has('l') || has('r'),
            Access::CreateTable => has('c') || has('w') || has('a'),
            Access::ServiceRead => has('r'),
            Access::ServiceWrite => has('w'),
            Access::KeyOnly => false,
        };
        if !granted {
            return Err(deny(format!(
                "the SAS permissions {:?} do not allow {access:?}",
                self.permissions
            )));
        }
        if let Some((pk, rk)) = key
            && !self.range.contains(pk, rk)
        {
            return Err(deny(format!(
                "entity ({pk:?}, {rk:?}) is outside the SAS key range"
            )));
        }
        Ok(())
    }

    const fn is_account(&self) -> bool {
        matches!(self.scope, SasScope::Account { .. })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

    use super::*;
    use crate::server::limits::DEFAULT_KEY;

    /// Computed independently with Python's `hmac` over the documented table SAS
    /// string-to-sign (sp=r, se=2030-01-01T00:00:00Z, tn=people, sv=2019-02-02, spk=a, epk=b).
    const KNOWN_SIG: &str = "++me9q5KqxLT6kpOubtbVXxVBbqdijlhGjRbzwF+1jg=";

    fn params(name: &str) -> Option<&'static str> {
        match name {
            "sp" => Some("r"),
            "se" => Some("2030-01-01T00:00:00Z"),
            "tn" => Some("people"),
            "sv" => Some("2019-02-02"),
            "spk" => Some("a"),
            "epk" => Some("b"),
            "sig" => Some(KNOWN_SIG),
            _ => None,
        }
    }

    fn verify_at(now: &str) -> Result<Sas> {
        let key = STANDARD.decode(DEFAULT_KEY).unwrap();
        verify_sas(
            params,
            "devstoreaccount1",
            &key,
            DateTime::parse(now).unwrap(),
            |_, _| Ok(None),
        )
    }

    #[test]
    fn sas_table_signature_matches_known_vector_and_enforces_range() {
        let sas = verify_at("2024-01-01T00:00:00Z").unwrap();
        sas.authorize(Access::Read, Some("People"), Some(("a", "x")))
            .unwrap();
        sas.authorize(Access::Read, Some("people"), Some(("b", "zzz")))
            .unwrap();
        for (access, table, pk) in [
            (Access::Read, "people", "c"),
            (Access::Read, "people", "0"),
            (Access::Add, "people", "a"),
            (Access::Read, "others", "a"),
        ] {
            assert!(matches!(
                sas.authorize(access, Some(table), Some((pk, "r"))),
                Err(ServerError::AuthorizationPermissionMismatch { .. })
            ));
        }
    }

    #[test]
    fn sas_account_service_operations_need_resource_type_s_and_r_or_w() {
        let sas = |resource_types: &str, permissions: &str| Sas {
            scope: SasScope::Account {
                resource_types: resource_types.to_owned(),
            },
            permissions: permissions.to_owned(),
            range: KeyRange::default(),
        };
        assert!(
            sas("s", "r")
                .authorize(Access::ServiceRead, None, None)
                .is_ok()
        );
        assert!(
            sas("s", "w")
                .authorize(Access::ServiceWrite, None, None)
                .is_ok()
        );
        assert!(matches!(
            sas("co", "rw").authorize(Access::ServiceRead, None, None),
            Err(ServerError::AuthorizationResourceTypeMismatch { .. })
        ));
        for (types, permissions, access) in [
            ("s", "w", Access::ServiceRead),
            ("s", "r", Access::ServiceWrite),
            ("sco", "rwdlacu", Access::KeyOnly),
        ] {
            assert!(
                matches!(
                    sas(types, permissions).authorize(access, None, None),
                    Err(ServerError::AuthorizationPermissionMismatch { .. })
                ),
                "{types} {permissions} {access:?}"
            );
        }
        let table = Sas {
            scope: SasScope::Table {
                table: "t".to_owned(),
            },
            permissions: "raud".to_owned(),
            range: KeyRange::default(),
        };
        assert!(table.authorize(Access::ServiceRead, None, None).is_err());
    }

    #[test]
    fn sas_expired_is_authentication_failed() {
        assert!(matches!(
            verify_at("2031-01-01T00:00:00Z"),
            Err(ServerError::AuthenticationFailed { .. })
        ));
    }
}
