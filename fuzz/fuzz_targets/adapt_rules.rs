//! The adapter's rules reader and layout on hostile rules files, against the real
//! all-MiniLM-L6-v2 header (tests/vectors/minilm) at a few grids: never panics; a
//! placement the adapter builds is valid and reads back from its own JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::{Options, Placement};
use weight_manifest_adapt::{self as adapt, AdaptOptions, Checkpoint, Grid, Rules};

static HEADER: &[u8] = include_bytes!("../../tests/vectors/minilm/model.safetensors.header.json");

fuzz_target!(|data: &[u8]| {
    let Ok(rules) = Rules::from_json(data, &Options::default()) else {
        return;
    };
    let checkpoint =
        Checkpoint::from_header(HEADER, "model.safetensors").expect("the MiniLM header reads");
    for grid in [
        Grid::default(),
        Grid {
            dp: 1,
            pp: 2,
            tp: 2,
            ep: 1,
        },
        Grid {
            dp: 2,
            pp: 1,
            tp: 4,
            ep: 2,
        },
    ] {
        let options = AdaptOptions::new("m", "r", grid);
        let Ok(placement) = adapt::placement(&checkpoint, &rules, &options) else {
            continue;
        };
        let again = Placement::from_json(placement.to_json(), &Options::default())
            .expect("an adapted placement reads back");
        assert_eq!(again.placement_id(), placement.placement_id());
    }
});
