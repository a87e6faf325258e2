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
    /// Anything that needs the account key (ACLs, service properties).
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
    let (scope, message, mut permissions, mut start, mut expiry);
    if let Some(services) = param("ss") {
        if !services.contains('t') {
            return Err(fail("the account SAS does not grant the table service"));
        }
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
        scope = SasScope::Account {
            resource_types: get("srt").to_owned(),
        };
        message = String::new();
        permissions = get("sp").to_owned();
        start = param("st").map(str::to_owned);
        expiry = param("se").map(str::to_owned);
    } else {
        let table = param("tn")
            .ok_or_else(|| fail("the SAS names no table (tn) and no services (ss)"))?
            .to_ascii_lowercase();
        message = format!(
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
    let _ = message;
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
    /// [`ServerError::AuthorizationPermissionMismatch`] naming what is not granted.
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
                    _ => 'o',
                };
                if !resource_types.contains(needed) {
                    return Err(deny(format!("the SAS resource types lack {needed:?}")));
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
