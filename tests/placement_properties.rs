//! Placement properties (contract §13.1–§13.2): order independence, parse/emit fixed
//! point, digest = SHA-256 of the emitted text; and no input makes any operation panic.

use std::path::Path;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use weight_manifest::Placement;
use weight_manifest::{Options, Runtime};
use weight_manifest_conformance::ops::{run, Op, OpInput};

fn reference(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/vectors/reference")
            .join(name),
    )
    .unwrap()
}

const PLACEMENTS: [&str; 3] = ["01_tp_sharded_2d", "02_moe_ep_pp", "03_tied_aliases"];

/// Permutes `items` by sorting on keys drawn from `seed`.
fn shuffle(items: &mut [Json], seed: u64) {
    let mut state = seed | 1;
    let mut keyed: Vec<(u64, Json)> = items
        .iter()
        .map(|item| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state, item.clone())
        })
        .collect();
    keyed.sort_by_key(|(k, _)| *k);
    for (slot, (_, item)) in items.iter_mut().zip(keyed) {
        *slot = item;
    }
}

#[test]
fn any_order_of_tensors_fragments_and_aliases_gives_the_same_bytes() {
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    for name in PLACEMENTS {
        let wire = reference(&format!("{name}.placement.json"));
        let document: Json = serde_json::from_str(&wire).unwrap();
        runner
            .run(&any::<u64>(), |seed| {
                let mut doc = document.clone();
                shuffle(doc["tensors"].as_array_mut().unwrap(), seed);
                shuffle(
                    doc["fragments"].as_array_mut().unwrap(),
                    seed.rotate_left(7),
                );
                for fragment in doc["fragments"].as_array_mut().unwrap() {
                    shuffle(
                        fragment["aliases"].as_array_mut().unwrap(),
                        seed.rotate_left(13),
                    );
                }
                let placement = Placement::from_json(
                    serde_json::to_vec_pretty(&doc).unwrap(),
                    &Options::default(),
                )
                .unwrap();
                prop_assert_eq!(placement.to_json(), wire.clone());
                Ok(())
            })
            .unwrap();
    }
}

#[test]
fn emission_is_a_fixed_point_and_the_digest_hashes_it() {
    for name in PLACEMENTS {
        let placement = Placement::from_json(
            reference(&format!("{name}.placement.pretty.json")),
            &Options::default(),
        )
        .unwrap();
        let text = placement.to_json();
        let again = Placement::from_json(&text, &Options::default()).unwrap();
        assert_eq!(again, placement);
        assert_eq!(again.to_json(), text);
        let hashed = weight_manifest::canonical::hex(&Sha256::digest(text.as_bytes()).into());
        assert_eq!(placement.digest(), hashed);
        let from_wire = Placement::from_wire(placement.as_wire()).unwrap();
        assert_eq!(from_wire, placement, "typed input runs the same path");
    }
}

const OPS: [Op; 11] = [
    Op::PlacementParse,
    Op::PlacementFromInventory,
    Op::RuntimeFromInventory,
    Op::BindingFromInventory,
    Op::ProjectPlacement,
    Op::ProjectBinding,
    Op::Bind,
    Op::RuntimeParse,
    Op::BindingParse,
    Op::Coverage,
    Op::Plan,
];

/// Every operation on a mutated document returns (accepting or rejecting); a panic fails
/// the property. Mutations are byte edits of real documents, so most of them get past the
/// reader and reach the checks.
#[test]
fn mutated_documents_never_panic() {
    let sources: Vec<String> = [
        "01_tp_sharded_2d.runtime-inventory.json",
        "03_tied_aliases.binding-inventory.json",
        "w3.placement.json",
        "w3.runtime-inventory.json",
    ]
    .iter()
    .map(|n| reference(n))
    // A runtime manifest document (§9.1), which no reference file holds.
    .chain([Runtime::from_inventory_json(
        reference("w2.runtime-inventory.json").as_bytes(),
        &weight_manifest::Options::default(),
    )
    .unwrap()
    .to_json()])
    .collect();
    let tokens: Vec<&str> = vec![
        "0",
        "1",
        "-1",
        "18446744073709551615",
        "18446744073709551616",
        "2.0",
        "null",
        "true",
        "\"\"",
        "[]",
        "{}",
        ",",
        "\"a\"",
        "NaN",
        "\\ud800",
        "[0,0]",
        "\"rank\":{}",
    ];
    let mut runner = TestRunner::new(Config {
        cases: 1500,
        ..Config::default()
    });
    let strategy = (
        0..sources.len(),
        any::<prop::sample::Index>(),
        0..tokens.len(),
        0usize..3,
    );
    runner
        .run(&strategy, |(source, at, token, kind)| {
            let text = &sources[source];
            let mut cut = at.index(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let mut mutated = text[..cut].to_owned();
            match kind {
                0 => mutated.push_str(tokens[token]),
                1 => {}
                _ => mutated.push_str(&text[cut..].replacen(
                    |c: char| c.is_ascii_digit(),
                    tokens[token],
                    1,
                )),
            }
            if kind < 2 {
                let skip = (cut + 1 + token).min(text.len());
                let mut skip_at = skip;
                while !text.is_char_boundary(skip_at) {
                    skip_at += 1;
                }
                mutated.push_str(&text[skip_at..]);
            }
            for op in OPS {
                let input = OpInput {
                    document: Some(mutated.clone()),
                    placement: Some(reference("w2.placement.json")),
                    binding: Some(mutated.clone()),
                    source: Some(mutated.clone()),
                    target: Some(reference("w3.placement.json")),
                    ..OpInput::default()
                };
                let outcome = run(op, &input, &weight_manifest::Limits::default())
                    .expect("request is complete");
                if let Err(error) = outcome {
                    prop_assert!(!error.message().is_empty());
                }
            }
            Ok(())
        })
        .unwrap();
}
