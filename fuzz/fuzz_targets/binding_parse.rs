//! Runtime binding manifest JSON (§9.2): never panics; parse(emit(x)) = x.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest::Binding;
use weight_manifest::Options;

fuzz_target!(|data: &[u8]| {
    let Ok(binding) = Binding::from_json(data, &Options::default()) else {
        return;
    };
    let text = binding.to_json();
    let again = Binding::from_json(&text, &Options::default()).expect("emitted binding must parse");
    assert_eq!(again, binding);
    assert_eq!(again.to_json(), text);
});
