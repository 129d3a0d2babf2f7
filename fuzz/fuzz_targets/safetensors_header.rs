//! Safetensors files on hostile bytes: a length prefix that lies, huge or overlapping
//! `data_offsets`, non-UTF-8, unknown dtypes, a header over the limit. The input is a whole
//! file (`Checkpoint::from_file_bytes`) and, separately, a header alone
//! (`Checkpoint::from_header`). Never panics; whatever reads has distinct, sorted names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest_adapt::Checkpoint;

fn check(checkpoint: &Checkpoint) {
    let names: Vec<&str> = checkpoint
        .tensors()
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert!(
        names.windows(2).all(|w| w[0] < w[1]),
        "names sorted and distinct"
    );
}

fuzz_target!(|data: &[u8]| {
    if let Ok(checkpoint) = Checkpoint::from_file_bytes(data, "model.safetensors") {
        check(&checkpoint);
    }
    if let Ok(checkpoint) = Checkpoint::from_header(data, "model.safetensors") {
        check(&checkpoint);
    }
});
