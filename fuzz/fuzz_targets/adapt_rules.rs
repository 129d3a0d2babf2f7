//! The adapter's rules reader and layout on hostile rules files, against the real
//! all-MiniLM-L6-v2 header (tests/vectors/minilm) on two grids, the trivial one and one
//! with every axis split in two: never panics, and a placement the adapter builds is
//! valid (`Placement::from_wire` checks every contract rule; reading a placement's JSON
//! back is the `placement_parse` target's work, so it is not repeated here).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use weight_manifest::Options;
use weight_manifest_adapt::{self as adapt, AdaptOptions, Checkpoint, Grid, Rules};

static HEADER: &[u8] = include_bytes!("../../tests/vectors/minilm/model.safetensors.header.json");

/// The header is not under test here (`safetensors_header` fuzzes it): read it once.
fn checkpoint() -> &'static Checkpoint {
    static CHECKPOINT: OnceLock<Checkpoint> = OnceLock::new();
    CHECKPOINT.get_or_init(|| {
        Checkpoint::from_header(HEADER, "model.safetensors").expect("the MiniLM header reads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(rules) = Rules::from_json(data, &Options::default()) else {
        return;
    };
    let checkpoint = checkpoint();
    for grid in [
        Grid::default(),
        Grid {
            dp: 2,
            pp: 2,
            tp: 2,
            ep: 2,
        },
    ] {
        let options = AdaptOptions::new("m", "r", grid);
        if let Ok(placement) = adapt::placement(checkpoint, &rules, &options) {
            assert!(placement.placement_id().starts_with("sha256:"));
        }
    }
});
