//! The fast paths against the general path: on every input, either the fast path leaves
//! the document to the general path, or both give the same result, errors included.

use std::path::Path;

use proptest::prelude::*;

use crate::error::Result;
use crate::inventory::RuntimeSummary;
use crate::limits::Limits;
use crate::model::{Placement, Runtime};
use crate::options::Options;
use crate::reader;
use weight_manifest_bench_data::{write_placement, write_runtime_inventory, Model};

fn general_placement(text: &[u8]) -> Result<Placement> {
    Placement::from_value(
        &reader::read(text, "placement manifest", &crate::Limits::default())?,
        &Options::default(),
    )
}

fn general_runtime(text: &[u8], options: &Options<'_>) -> Result<Runtime> {
    Runtime::from_inventory(
        &reader::read(text, "runtime inventory", &crate::Limits::default())?,
        options,
    )
}

/// Whether the fast paths agree with the general path on `text`; the number of fast paths
/// that decided (did not defer).
fn agree(text: &[u8]) -> usize {
    let mut decided = 0;
    if let Some(fast) = super::placement(text, &Limits::default()) {
        assert_eq!(
            fast,
            general_placement(text),
            "{}",
            String::from_utf8_lossy(text)
        );
        decided += 1;
    }
    for options in [Options::default(), Options::view()] {
        if let Some(fast) = super::runtime_inventory(text, &options) {
            assert_eq!(
                fast,
                general_runtime(text, &options),
                "{}",
                String::from_utf8_lossy(text)
            );
            decided += 1;
        }
        // The compact validation only ever says "valid", and then with the full counts.
        if let Some(summary) = super::runtime_inventory_summary(text, &options) {
            let runtime = general_runtime(text, &options).expect("compact path accepted");
            assert_eq!(summary, RuntimeSummary::from(&runtime));
        }
    }
    decided
}

fn small_model() -> Model {
    Model {
        experts: 4,
        tp: 2,
        pp: 2,
        ..Model::deepseek_v3().truncated(4)
    }
}

fn placement_text() -> Vec<u8> {
    let mut text = Vec::new();
    write_placement(&small_model(), &mut text).unwrap();
    text
}

fn inventory_text() -> Vec<u8> {
    let mut text = Vec::new();
    write_runtime_inventory(&small_model(), &mut text).unwrap();
    text
}

#[test]
fn generated_documents_take_the_fast_path() {
    let placement = placement_text();
    assert!(super::placement(&placement, &Limits::default()).is_some_and(|r| r.is_ok()));
    assert_eq!(agree(&placement), 1);
    let inventory = inventory_text();
    assert!(super::runtime_inventory(&inventory, &Options::default()).is_some_and(|r| r.is_ok()));
    assert_eq!(agree(&inventory), 2);
}

#[test]
fn conformance_documents_agree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let fixtures = weight_manifest_conformance::load_fixtures(&root).unwrap();
    assert!(fixtures.len() > 100);
    let mut decided = 0;
    for fixture in &fixtures {
        let input = &fixture.fixture.input;
        for text in [&input.document, &input.placement, &input.binding]
            .into_iter()
            .flatten()
        {
            decided += agree(text.as_bytes());
        }
    }
    assert!(
        decided > 50,
        "the fast paths decided only {decided} documents"
    );
}

/// One edit of a document: delete, insert or replace a byte, or repeat a slice.
fn mutate(text: &mut Vec<u8>, (kind, at, len, byte): (u8, usize, usize, u8)) {
    const BYTES: &[u8] = b"\"\\{}[],: 0123456789-.eEnultrfa\n\x01\xc3\xa9";
    if text.is_empty() {
        return;
    }
    let at = at % text.len();
    let byte = BYTES[usize::from(byte) % BYTES.len()];
    match kind % 4 {
        0 => {
            text.remove(at);
        }
        1 => text.insert(at, byte),
        2 => text[at] = byte,
        _ => {
            let end = (at + len % 64).min(text.len());
            let slice = text[at..end].to_vec();
            text.splice(at..at, slice);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mutated_placements_agree(edits in prop::collection::vec(any::<(u8, usize, usize, u8)>(), 1..4)) {
        let mut text = placement_text();
        for edit in edits {
            mutate(&mut text, edit);
        }
        agree(&text);
    }

    #[test]
    fn mutated_inventories_agree(edits in prop::collection::vec(any::<(u8, usize, usize, u8)>(), 1..4)) {
        let mut text = inventory_text();
        for edit in edits {
            mutate(&mut text, edit);
        }
        agree(&text);
    }
}

#[test]
fn same_bytes_agrees_with_slice_equality() {
    let base: Vec<u8> = (0u8..40).map(|i| b'a' + i % 26).collect();
    for n in 0..=40 {
        let a = &base[..n];
        assert!(super::cursor::same_bytes(a, a));
        for at in 0..n {
            let mut b = a.to_vec();
            b[at] ^= 1;
            assert!(
                !super::cursor::same_bytes(a, &b),
                "length {n}, differing at {at}"
            );
        }
        if n > 0 {
            assert!(!super::cursor::same_bytes(a, &base[..n - 1]));
        }
    }
}
