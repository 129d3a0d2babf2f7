//! The fence rule of a weight update (contract §17.7): before a byte moves, what each
//! worker, and each side's whole runtime binding, holds now must still be what the bound
//! plan was bound at.
//!
//! A bound plan carries one fence per side ([`BoundPlan`]'s `source` and `target`:
//! placement_id, placement digest, instance_id, lease_id, generation). [`check`] compares
//! a [`Held`] fence with the bound plan's for one [`Side`], member by member in that
//! order, and rejects the first difference with `transfer_fence_mismatch`, the pointer
//! into the bound plan (`/target/lease_id`) and the two values. A single worker does not
//! know which placement its side's binding locates: its placement members are `None`
//! and are not compared; the coordinator checks the side's assembled binding
//! ([`Held::of_binding`]) for them. The Python binding, the CLI (`weight-manifest fence`)
//! and the C ABI (`wm_fence_check`) all call this one function.

use crate::derived::HeldFenceDocument;
use crate::document;
use crate::error::{Code, Detail, Error, Result};
use crate::model::Binding;
use crate::options::Options;
use crate::plan_bind::BoundPlan;
use crate::wire::{BoundSide, HeldFence};

/// The side of a bound plan a fence belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The binding the bytes are read from.
    Source,
    /// The binding the bytes are written to.
    Target,
}

impl Side {
    /// The bound plan's member name: `source` or `target`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Source => "source",
            Side::Target => "target",
        }
    }

    /// `source` or `target`; any other name is `None`.
    pub fn parse(name: &str) -> Option<Side> {
        match name {
            "source" => Some(Side::Source),
            "target" => Some(Side::Target),
            _ => None,
        }
    }
}

/// What a worker, or a side's whole binding, holds now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Held<'a> {
    /// The worker named in a rejection; `None` for a whole binding.
    pub worker_id: Option<&'a str>,
    /// The placement_id its binding locates; `None`: not known to the holder.
    pub placement_id: Option<&'a str>,
    /// The placement digest its binding locates; `None`: not known to the holder.
    pub placement_digest: Option<&'a str>,
    /// The instance_id held now.
    pub instance_id: &'a str,
    /// The lease_id held now.
    pub lease_id: &'a str,
    /// The lease generation held now.
    pub generation: u64,
}

impl<'a> Held<'a> {
    /// The fence of a whole runtime binding (every member stated).
    pub fn of_binding(binding: &'a Binding) -> Held<'a> {
        let wire = binding.as_wire();
        Held {
            worker_id: None,
            placement_id: Some(&wire.placement_id),
            placement_digest: Some(&wire.placement_digest),
            instance_id: &wire.instance_id,
            lease_id: &wire.lease_id,
            generation: wire.generation,
        }
    }

    /// The fence a held fence document states.
    pub fn of_document(document: &'a HeldFence) -> Held<'a> {
        Held {
            worker_id: document.worker_id.as_deref(),
            placement_id: document.placement_id.as_deref(),
            placement_digest: document.placement_digest.as_deref(),
            instance_id: &document.instance_id,
            lease_id: &document.lease_id,
            generation: document.generation,
        }
    }
}

/// Reads a held fence document (`schema/fence.schema.json`) strictly, under
/// `options.limits`.
///
/// # Errors
///
/// The reader's errors (contract §4), `limit_exceeded`, and `fence_document_invalid` when
/// the document is not an object with exactly the fence schema's members and types.
pub fn read_held(text: impl AsRef<[u8]>, options: &Options<'_>) -> Result<HeldFence> {
    document::read::<HeldFenceDocument>(text.as_ref(), options)
}

/// One member of a fence: its name, what the bound plan was bound at and what is held
/// now (`None`: not stated by the holder), as JSON text for the message and the detail.
struct Member {
    name: &'static str,
    bound: String,
    held: Option<String>,
}

/// A string as its JSON text (the canonical encoding, §5).
fn text(value: &str) -> String {
    crate::canonical::to_string(value).unwrap_or_else(|_| format!("{value:?}"))
}

fn members(bound: &BoundSide, held: &Held<'_>) -> [Member; 5] {
    [
        Member {
            name: "placement_id",
            bound: text(&bound.placement_id),
            held: held.placement_id.map(text),
        },
        Member {
            name: "placement_digest",
            bound: text(&bound.placement_digest),
            held: held.placement_digest.map(text),
        },
        Member {
            name: "instance_id",
            bound: text(&bound.instance_id),
            held: Some(text(held.instance_id)),
        },
        Member {
            name: "lease_id",
            bound: text(&bound.lease_id),
            held: Some(text(held.lease_id)),
        },
        Member {
            name: "generation",
            bound: bound.generation.to_string(),
            held: Some(held.generation.to_string()),
        },
    ]
}

/// Checks `held` against the fence `bound` carries for `side`.
///
/// # Errors
///
/// `transfer_fence_mismatch` for the first member, in the order placement_id,
/// placement_digest, instance_id, lease_id, generation, whose held value differs from the
/// bound plan's; its pointer is `/{side}/{member}` of the bound plan and its detail the
/// two values (`expected`: the bound plan's). Members the holder does not state are
/// skipped.
pub fn check(bound: &BoundPlan, side: Side, held: &Held<'_>) -> Result<()> {
    let wire = bound.as_wire();
    check_side(
        match side {
            Side::Source => &wire.source,
            Side::Target => &wire.target,
        },
        side,
        held,
    )
}

/// [`check`] against one side's fence taken from a bound plan (`fence` is the bound
/// plan's `side` member): for a holder of the fences without the copies.
///
/// # Errors
///
/// As for [`check`].
pub fn check_side(fence: &BoundSide, side: Side, held: &Held<'_>) -> Result<()> {
    for member in members(fence, held) {
        let Some(now) = member.held else { continue };
        if now == member.bound {
            continue;
        }
        let holder = held
            .worker_id
            .map_or_else(|| "binding".to_owned(), |w| format!("worker {w}"));
        return Err(Error::new(
            Code::TransferFenceMismatch,
            format!(
                "the {} {holder} holds {} {now}, the bound plan was bound at {}: bind again",
                side.as_str(),
                member.name,
                member.bound
            ),
        )
        .with_pointer(Some(format!("/{}/{}", side.as_str(), member.name)))
        .with_detail(Detail::Mismatch {
            expected: member.bound,
            got: now,
            other: None,
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/plan_bind/");

    /// The plan_bind vector's bound plan: target instance `server`, lease
    /// `lease-server-12`, generation 12; source instance `trainer`.
    fn bound() -> BoundPlan {
        let text = std::fs::read(format!("{VECTORS}bound-plan.json")).unwrap();
        BoundPlan::from_json(text, &Options::default()).unwrap()
    }

    fn binding(name: &str) -> Binding {
        let text = std::fs::read(format!("{VECTORS}{name}")).unwrap();
        Binding::from_json(text, &Options::default()).unwrap()
    }

    fn worker(lease: &str, generation: u64) -> Held<'_> {
        Held {
            worker_id: Some("server-0"),
            placement_id: None,
            placement_digest: None,
            instance_id: "server",
            lease_id: lease,
            generation,
        }
    }

    #[test]
    fn the_fence_held_passes_and_the_other_side_is_not_this_sides() {
        let plan = bound();
        check(&plan, Side::Target, &worker("lease-server-12", 12)).unwrap();
        check(
            &plan,
            Side::Target,
            &Held::of_binding(&binding("target-binding.json")),
        )
        .unwrap();
        check(
            &plan,
            Side::Source,
            &Held::of_binding(&binding("source-binding.json")),
        )
        .unwrap();
        // The source side has another instance: the same holder fails there.
        let error = check(&plan, Side::Source, &worker("lease-server-12", 12)).unwrap_err();
        assert_eq!(error.path(), Some("/source/instance_id"));
    }

    #[test]
    fn each_member_is_compared_in_order_with_its_pointer_and_values() {
        let plan = bound();
        let error = check(&plan, Side::Target, &worker("lease-server-13", 13)).unwrap_err();
        assert_eq!(error.code(), Code::TransferFenceMismatch);
        // lease_id comes before generation.
        assert_eq!(error.path(), Some("/target/lease_id"));
        assert_eq!(
            error.message(),
            r#"the target worker server-0 holds lease_id "lease-server-13", the bound plan was bound at "lease-server-12": bind again"#
        );
        let error = check(&plan, Side::Target, &worker("lease-server-12", 13)).unwrap_err();
        assert_eq!(error.path(), Some("/target/generation"));
        assert_eq!(
            error.detail(),
            Some(&Detail::Mismatch {
                expected: "12".into(),
                got: "13".into(),
                other: None
            })
        );
        let restarted = Held {
            instance_id: "server-restarted",
            ..worker("lease-server-12", 12)
        };
        let error = check(&plan, Side::Target, &restarted).unwrap_err();
        assert_eq!(error.path(), Some("/target/instance_id"));
    }

    #[test]
    fn a_binding_states_its_placement_too() {
        let plan = bound();
        // The vector's binding of the same placement under the stale lease 11, and one
        // that locates a placement of another digest.
        let stale = binding("target-binding-stale.json");
        let error = check(&plan, Side::Target, &Held::of_binding(&stale)).unwrap_err();
        assert_eq!(error.path(), Some("/target/lease_id"));
        assert!(error
            .message()
            .starts_with("the target binding holds lease_id "));
        let other = binding("target-binding-other-digest.json");
        let error = check(&plan, Side::Target, &Held::of_binding(&other)).unwrap_err();
        assert_eq!(error.path(), Some("/target/placement_digest"));
        let elsewhere = format!("sha256:{}", "f".repeat(64));
        let current = binding("target-binding.json");
        let moved = Held {
            placement_id: Some(&elsewhere),
            ..Held::of_binding(&current)
        };
        let error = check(&plan, Side::Target, &moved).unwrap_err();
        assert_eq!(error.path(), Some("/target/placement_id"));
    }

    #[test]
    fn a_held_document_is_read_strictly() {
        let text = r#"{"generation":12,"instance_id":"server","lease_id":"lease-server-12","placement_digest":null,"placement_id":null,"worker_id":"server-0"}"#;
        let document = read_held(text, &Options::default()).unwrap();
        check(&bound(), Side::Target, &Held::of_document(&document)).unwrap();
        let extra = text.replacen('{', r#"{"extra":1,"#, 1);
        let error = read_held(extra, &Options::default()).unwrap_err();
        assert_eq!(error.code(), Code::FenceDocumentInvalid);
        let missing = r#"{"generation":12,"instance_id":"server","lease_id":"lease-server-12"}"#;
        assert_eq!(
            read_held(missing, &Options::default()).unwrap_err().code(),
            Code::FenceDocumentInvalid
        );
        assert_eq!(
            read_held("[]", &Options::default()).unwrap_err().code(),
            Code::FenceDocumentInvalid
        );
        assert_eq!(
            read_held("{", &Options::default()).unwrap_err().code(),
            Code::InvalidJson
        );
    }

    #[test]
    fn sides_parse_by_name() {
        assert_eq!(Side::parse("source"), Some(Side::Source));
        assert_eq!(Side::parse("target").map(Side::as_str), Some("target"));
        assert_eq!(Side::parse("both"), None);
    }
}
