//! The layout of a body read in body order: which members are its keys, which are its
//! properties (in stored order) and which annotates which. The layout follows from the
//! member names alone, and the bodies of a batch repeat one another's names, so one layout
//! is made for the first body and reused while the names stay those of that body.

use std::borrow::Cow;

use super::super::{ODATA_PREFIX, TYPE_ANNOTATION_SUFFIX};
use super::encode::utf16_bytes;
use super::{Scalar, name_order};
use crate::model::PropertyName;

/// Most properties a [`BodyPlan`] takes.
const PLAN_MAX_PROPERTIES: usize = 16;

/// One property of a [`BodyPlan`].
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PlannedProperty {
    /// Index of the property's member.
    pub(super) member: usize,
    /// Index of the member annotating its type, if any.
    pub(super) annotation: Option<usize>,
    /// The name's size in UTF-16 bytes (SPEC §2).
    pub(super) name_bytes: usize,
}

/// The layout of a common body: no name given twice (keys, properties or annotations), every
/// annotation right after its property, at most [`PLAN_MAX_PROPERTIES`] properties, every
/// property name valid. Only the properties are sorted (an SDK body's 10 members hold 3 or
/// 4), where sorting every member cost more than encoding them.
#[derive(Debug, Clone)]
pub(super) struct BodyPlan {
    properties: [PlannedProperty; PLAN_MAX_PROPERTIES],
    count: usize,
    /// Index of the `PartitionKey` member, if any.
    pub(super) partition_key: Option<usize>,
    /// Index of the `RowKey` member, if any.
    pub(super) row_key: Option<usize>,
}

impl BodyPlan {
    /// The layout of `members` (in body order); `None` for a body it does not describe.
    fn of(members: &[(Cow<'_, str>, Scalar<'_>)]) -> Option<Self> {
        let mut plan = Self {
            properties: [PlannedProperty::default(); PLAN_MAX_PROPERTIES],
            count: 0,
            partition_key: None,
            row_key: None,
        };
        let mut previous_property: Option<usize> = None;
        for (index, (name, _)) in members.iter().enumerate() {
            let name = name.as_ref();
            let last_property = previous_property.take();
            if name.starts_with(ODATA_PREFIX) {
                continue;
            }
            if let Some(base) = name.strip_suffix(TYPE_ANNOTATION_SUFFIX) {
                if PropertyName::is_reserved(base) {
                    continue;
                }
                // Only an annotation right after its own property, the property's first.
                let slot = last_property.and_then(|slot| plan.properties.get_mut(slot))?;
                let property = members.get(slot.member)?.0.as_ref();
                if property != base || slot.annotation.is_some() {
                    return None;
                }
                slot.annotation = Some(index);
                continue;
            }
            match name {
                "PartitionKey" if plan.partition_key.is_none() => plan.partition_key = Some(index),
                "RowKey" if plan.row_key.is_none() => plan.row_key = Some(index),
                "PartitionKey" | "RowKey" => return None,
                "Timestamp" => {}
                _ => {
                    PropertyName::check(name).ok()?;
                    *plan.properties.get_mut(plan.count)? = PlannedProperty {
                        member: index,
                        annotation: None,
                        name_bytes: utf16_bytes(name),
                    };
                    previous_property = Some(plan.count);
                    plan.count += 1;
                }
            }
        }
        let properties = plan.properties.get_mut(..plan.count)?;
        let name_of = |index: usize| members.get(index).map_or("", |(name, _)| name.as_ref());
        properties.sort_unstable_by(|a, b| name_order(name_of(a.member), name_of(b.member)));
        if properties
            .windows(2)
            .any(|pair| matches!(pair, [a, b] if name_of(a.member) == name_of(b.member)))
        {
            return None;
        }
        Some(plan)
    }

    /// The properties in stored (name) order.
    pub(super) fn properties(&self) -> &[PlannedProperty] {
        self.properties.get(..self.count).unwrap_or_default()
    }
}

/// The [`BodyPlan`] of the last body and the names it was made from, borrowed from that
/// body. The flat reader hands back a name equal to the one at the same place of the last
/// body as that very slice, so a body whose names are those slices, in order, has the same
/// names and the same plan: telling that costs a pointer comparison per member.
#[derive(Debug, Clone, Default)]
pub(super) struct PlanCache<'de> {
    names: Vec<&'de str>,
    plan: Option<BodyPlan>,
    /// Whether `names` are all of the plan's body's names.
    reusable: bool,
    /// Whether a plan was asked for before (see [`PlanCache::plan_for`]).
    asked: bool,
}

impl<'de> PlanCache<'de> {
    /// The plan of `members` (in body order), reused when their names are the last plan's.
    pub(super) fn plan_for(
        &mut self,
        members: &[(Cow<'de, str>, Scalar<'de>)],
    ) -> Option<&BodyPlan> {
        if !self.fits(members) {
            self.names.clear();
            self.plan = BodyPlan::of(members);
            // Most caches serve one body (a single-entity request): the names are noted
            // from the second body asked for on, so that one allocates nothing.
            if !std::mem::replace(&mut self.asked, true) {
                self.reusable = false;
                return self.plan.as_ref();
            }
            // Names holding an escape were decoded into owned text, which the next body
            // cannot hand back: such a plan is used once.
            self.names.reserve(members.len());
            self.reusable = members.iter().all(|(name, _)| match name {
                Cow::Borrowed(name) => {
                    self.names.push(name);
                    true
                }
                Cow::Owned(_) => false,
            });
        }
        self.plan.as_ref()
    }

    /// Whether `members` are named by the very slices the plan was made from.
    fn fits(&self, members: &[(Cow<'de, str>, Scalar<'de>)]) -> bool {
        self.reusable
            && self.plan.is_some()
            && self.names.len() == members.len()
            && self.names.iter().zip(members).all(|(old, (name, _))| {
                matches!(name, Cow::Borrowed(new) if std::ptr::eq::<str>(*old, *new))
            })
    }
}

/// A cache does not make two member lists differ.
impl PartialEq for PlanCache<'_> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
