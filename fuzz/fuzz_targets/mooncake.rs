//! Mooncake's readers (placement and Store manifest) on any bytes: never panic; an accepted
//! document re-emits to a fixed point whose SHA-256 is its digest; a placement's import
//! and the export of that import never panic, and an export reads back as Mooncake's.
//! The one-pass placement reader agrees with the tree reader: when it accepts, the tree
//! reader gives the same placement; it never accepts what the tree reader rejects. Mooncake
//! runtime bindings (this project's JSON form) re-emit to what reads back equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weight_manifest_mooncake::{export, import, ExportOptions, MooncakeBinding, MooncakePlacement, MooncakeStorageManifest};
use weight_manifest::Options;

fuzz_target!(|data: &[u8]| {
    let general = MooncakePlacement::from_json_general(data, &Options::default());
    if let Some(fast) = MooncakePlacement::from_json_one_pass(data, &Options::default()) {
        let general = general.as_ref().expect("the one-pass reader accepted what the tree reader rejects");
        assert_eq!(&fast, general, "the two readers read different placements");
        assert_eq!(fast.to_json(), general.to_json());
    }
    if let Ok(placement) = MooncakePlacement::from_json(data, &Options::default()) {
        let text = placement.to_json();
        let again = MooncakePlacement::from_json(text.as_bytes(), &Options::default()).expect("emitted placement must parse");
        assert_eq!(again, placement);
        assert_eq!(again.to_json(), text, "emission is a fixed point");
        assert_eq!(weight_manifest::canonical::sha256_hex(text.as_bytes()), placement.digest());
        if let Ok(imported) = import(&placement) {
            if let Ok(exported) = export(&imported.placement, &ExportOptions::default()) {
                MooncakePlacement::from_json(exported.to_json().as_bytes(), &Options::default()).expect("an export must read back");
            }
        }
    }
    if let Ok(bindings) = MooncakeBinding::list_from_json(data, &Options::default()) {
        let text = MooncakeBinding::list_to_json(&bindings);
        let again = MooncakeBinding::list_from_json(text.as_bytes(), &Options::default()).expect("emitted bindings must parse");
        assert_eq!(again, bindings);
    }
    if let Ok(manifest) = MooncakeStorageManifest::from_json(data, &Options::default()) {
        let text = manifest.to_json();
        let again = MooncakeStorageManifest::from_json(text.as_bytes(), &Options::default()).expect("emitted manifest must parse");
        assert_eq!(again, manifest);
        assert_eq!(again.to_json(), text, "emission is a fixed point");
    }
});
