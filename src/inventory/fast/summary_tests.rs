//! The compact table of a runtime inventory against the general path (the document tree
//! and §8.4 as written): on documents edited record by record (duplicate ids, overlapping
//! or aliased addresses, moved boxes, changed descriptors, ranks, leases and headers), the
//! summary says "valid" only when the general path accepts, with the same counts, and the
//! public `read_runtime_inventory` and `validate_runtime_inventory` give the general
//! path's result, error included.

use serde_json::{json, Value as Json};

use crate::error::Result;
use crate::inventory::{validate_runtime_inventory, RuntimeSummary};
use crate::model::Runtime;
use crate::options::Options;
use crate::reader;
use crate::test_support::Rng;

fn inventory() -> Json {
    let text = crate::test_support::inventory_text(&crate::test_support::small_model());
    serde_json::from_slice(&text).unwrap()
}

fn general(text: &[u8], options: &Options<'_>) -> Result<Runtime> {
    Runtime::from_inventory(
        &reader::read(text, "runtime inventory", &crate::Limits::default())?,
        options,
    )
}

/// The outcome of one document: whether the summary decided, whether the general path
/// accepted.
fn compare(text: &[u8]) -> (bool, bool) {
    let options = Options::default();
    let compact = crate::test_support::fast_runtime_inventory_summary(text, &options);
    let expected = general(text, &options);
    if let Some(summary) = compact {
        let runtime = expected
            .as_ref()
            .expect("the summary accepted an invalid document");
        assert_eq!(summary, RuntimeSummary::from(runtime));
    }
    assert_eq!(Runtime::from_inventory_json(text, &options), expected);
    let public = validate_runtime_inventory(text, &options);
    let summary = expected.as_ref().map(RuntimeSummary::from);
    assert_eq!(public, summary.map_err(Clone::clone));
    (compact.is_some(), expected.is_ok())
}

const MEMBERS: [&str; 14] = [
    "fragment_id",
    "tensor_id",
    "address",
    "nbytes",
    "global_offset",
    "local_shape",
    "rank",
    "worker_id",
    "device",
    "global_shape",
    "itemsize",
    "lease_generation",
    "shard_dims",
    "aliases",
];

/// A random index below `n`.
fn pick(rng: &mut Rng, n: usize) -> usize {
    usize::try_from(rng.below(n as u64)).unwrap()
}

/// One random edit of the records (or the header).
fn edit(document: &mut Json, rng: &mut Rng) {
    let records = document["tensors"].as_array_mut().unwrap();
    let (i, j) = (pick(rng, records.len()), pick(rng, records.len()));
    match rng.below(5) {
        // A member of one record copied onto another.
        0 => {
            let member = MEMBERS[pick(rng, MEMBERS.len())];
            let value = records[j][member].clone();
            records[i][member] = value;
        }
        // An exact alias pair, or a near one (one member left different).
        1 => {
            let (address, nbytes) = (records[i]["address"].clone(), records[i]["nbytes"].clone());
            for member in ["worker_id", "device", "global_offset", "local_shape"] {
                if rng.below(8) != 0 {
                    records[j][member] = records[i][member].clone();
                }
            }
            records[j]["address"] = address;
            records[j]["nbytes"] = nbytes;
            let names = if rng.below(4) == 0 {
                json!(["a"])
            } else {
                json!(["a", "b"])
            };
            records[i]["aliases"] = names.clone();
            records[j]["aliases"] = names;
        }
        // A number moved by a little.
        2 => {
            let step = rng.below(3) + 1;
            let bump = |v: &mut Json| *v = json!(v.as_u64().unwrap_or(0) + step);
            match rng.below(4) {
                0 => bump(&mut records[i]["address"]),
                1 => bump(&mut records[i]["nbytes"]),
                2 => bump(&mut records[i]["rank"]["tp"]),
                _ => bump(&mut records[i]["global_offset"][0]),
            }
        }
        // A record repeated, or removed.
        3 => {
            if rng.below(2) == 0 {
                let record = records[i].clone();
                records.push(record);
            } else {
                records.remove(i);
            }
        }
        // The header.
        _ => match rng.below(3) {
            0 => document["model_id"] = json!(""),
            1 => document["generation"] = json!(document["generation"].as_u64().unwrap() + 1),
            _ => document["lease_id"] = json!(null),
        },
    }
}

#[test]
fn the_generated_inventory_is_decided_by_the_compact_path() {
    let text = serde_json::to_vec(&inventory()).unwrap();
    assert_eq!(compare(&text), (true, true));
}

#[test]
fn edited_inventories_agree_with_the_full_reader() {
    let base = inventory();
    let mut rng = Rng::new(0x5eed_1234);
    let (mut decided, mut accepted, mut rejected) = (0, 0, 0);
    for round in 0..300 {
        let mut document = base.clone();
        for _ in 0..=rng.below(2) {
            edit(&mut document, &mut rng);
        }
        // Compact and pretty text: the fast path reads both.
        let text = if round % 2 == 0 {
            serde_json::to_vec(&document).unwrap()
        } else {
            serde_json::to_vec_pretty(&document).unwrap()
        };
        let (compact, full) = compare(&text);
        decided += usize::from(compact);
        accepted += usize::from(full);
        rejected += usize::from(!full);
    }
    // Both outcomes are exercised, and the compact path decides most valid documents.
    assert!(rejected > 100, "only {rejected} rejected");
    assert!(accepted > 50, "only {accepted} accepted");
    assert!(
        decided * 10 >= accepted * 9,
        "{decided} of {accepted} decided"
    );
}

#[test]
fn exact_alias_pairs_are_accepted_without_the_full_reader() {
    let mut document = inventory();
    let records = document["tensors"].as_array_mut().unwrap();
    // Two DP replicas of one tensor on one device, sharing memory (a tied copy).
    let first = records[0].clone();
    let mut twin = first.clone();
    twin["fragment_id"] = json!("twin");
    twin["rank"]["dp"] = json!(7);
    for record in [&mut records[0], &mut twin] {
        record["aliases"] = json!(["lm_head", "embed"]);
    }
    records.push(twin);
    let text = serde_json::to_vec(&document).unwrap();
    assert_eq!(compare(&text), (true, true));

    // One alias name is not a pair (§8.5 asks for two): the same ranges overlap, and the
    // full reader names it.
    let last = document["tensors"].as_array().unwrap().len() - 1;
    for i in [0, last] {
        document["tensors"][i]["aliases"] = json!(["embed"]);
    }
    let text = serde_json::to_vec(&document).unwrap();
    assert_eq!(compare(&text), (false, false));
    let error = general(&text, &Options::default()).unwrap_err();
    assert_eq!(error.code().as_str(), "address_overlap");
}

/// §8.5 asks an exact alias pair for the same lease_generation. A runtime inventory holds
/// one lease generation (each record's must be the document's, §10.3), so two otherwise
/// exact aliases under two generations are `lease_generation_mismatch`: the fast paths
/// must not accept them as a pair. (The compact table's pair rule used to skip the lease comparison, relying
/// on the reader's lease check; now it shares the general path's predicate.)
#[test]
fn an_alias_pair_under_two_lease_generations_is_not_accepted() {
    let mut document = inventory();
    let records = document["tensors"].as_array_mut().unwrap();
    let mut twin = records[0].clone();
    twin["fragment_id"] = json!("twin");
    twin["rank"]["dp"] = json!(7);
    for record in [&mut records[0], &mut twin] {
        record["aliases"] = json!(["lm_head", "embed"]);
    }
    let lease = twin["lease_generation"].as_u64().unwrap();
    twin["lease_generation"] = json!(lease + 1);
    records.push(twin);
    let text = serde_json::to_vec(&document).unwrap();
    assert_eq!(compare(&text), (false, false));
    for options in [Options::default(), Options::view()] {
        let expected = general(&text, &options);
        assert_eq!(
            expected.as_ref().unwrap_err().code().as_str(),
            "lease_generation_mismatch"
        );
        if let Some(fast) = crate::test_support::fast_runtime_inventory(&text, &options) {
            assert_eq!(fast, expected);
        }
    }
}
