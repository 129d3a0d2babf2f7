//! Runtime manifest JSON (§9.1): never panics; parse(emit(x)) = x and emit is stable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::Options;
use weight_manifest::Runtime;

fuzz_target!(|data: &[u8]| {
    let Ok(runtime) = Runtime::from_json(data, &Options::default()) else {
        return;
    };
    let text = runtime.to_json();
    let again = Runtime::from_json(&text, &Options::default()).expect("emitted runtime must parse");
    assert_eq!(again, runtime);
    assert_eq!(again.to_json(), text);
});
