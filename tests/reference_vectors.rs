//! The reference implementation's vectors (`tests/vectors/reference/`, a copy of
//! `shared/reference/`) reproduce byte for byte: canonical text, placement_id, digest,
//! generated fragment ids, and the derived runtime and binding forms.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use weight_manifest::{bind, project_binding, project_placement, Placement};
use weight_manifest::{Binding, Options, Runtime};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/reference")
}

fn bytes(name: &str) -> Vec<u8> {
    fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text(name: &str) -> String {
    String::from_utf8(bytes(name)).unwrap()
}

fn json(name: &str) -> serde_json::Value {
    serde_json::from_slice(&bytes(name)).unwrap()
}

fn sha256_hex(data: &[u8]) -> String {
    weight_manifest::canonical::hex(&Sha256::digest(data).into())
}

const MODELS: [&str; 3] = ["01_tp_sharded_2d", "02_moe_ep_pp", "03_tied_aliases"];

#[test]
fn model_placements_parse_to_themselves_with_recorded_ids() {
    let ids = json("ids.json");
    for model in MODELS {
        let wire = text(&format!("{model}.placement.json"));
        let placement = Placement::from_json(&wire, &Options::default()).unwrap();
        let recorded = &ids[model];
        assert_eq!(placement.to_json(), wire, "{model}");
        assert_eq!(
            placement.placement_id(),
            recorded["placement_id"],
            "{model}"
        );
        assert_eq!(placement.digest(), recorded["digest"], "{model}");
        assert_eq!(placement.digest(), sha256_hex(wire.as_bytes()));
        assert_eq!(
            placement.tensors().len() as u64,
            recorded["tensor_count"].as_u64().unwrap()
        );
        assert_eq!(
            placement.fragments().len() as u64,
            recorded["fragment_count"].as_u64().unwrap()
        );

        let pretty = Placement::from_json(
            bytes(&format!("{model}.placement.pretty.json")),
            &Options::default(),
        )
        .unwrap();
        assert_eq!(pretty.to_json(), wire, "{model} pretty");

        let payload = bytes(&format!("{model}.placement-id-payload.json"));
        assert_eq!(
            format!("sha256:{}", sha256_hex(&payload)),
            placement.placement_id()
        );
    }
}

#[test]
fn model_runtime_inventories_project_to_recorded_placements_and_fragment_ids() {
    let ids = json("ids.json");
    for model in MODELS {
        let inventory = bytes(&format!("{model}.runtime-inventory.json"));
        let runtime = Runtime::from_inventory_json(&inventory, &Options::default()).unwrap();
        assert_eq!(
            runtime.to_json(),
            text(&format!("derived/{model}.runtime.json")),
            "{model}"
        );

        let placement = project_placement(&runtime, None).unwrap();
        assert_eq!(
            placement.to_json(),
            text(&format!("{model}.placement.json")),
            "{model}"
        );

        let recorded: Vec<(String, String)> = ids[model]["fragments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["runtime_fragment_id"].as_str().unwrap().to_owned(),
                    f["placement_fragment_id"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        for (runtime_id, placement_id) in &recorded {
            let fragment = runtime
                .fragments()
                .iter()
                .find(|f| &f.fragment_id == runtime_id)
                .unwrap();
            assert_eq!(
                &weight_manifest::placement_fragment_id(fragment),
                placement_id
            );
        }

        let binding = project_binding(&runtime, None).unwrap();
        assert_eq!(
            binding.to_json(),
            text(&format!("derived/{model}.binding.json")),
            "{model}"
        );
    }
}

#[test]
fn model_bindings_read_and_bind_to_the_recorded_runtime() {
    for model in MODELS {
        let placement = Placement::from_json(
            bytes(&format!("{model}.placement.json")),
            &Options::default(),
        )
        .unwrap();
        let inventory = bytes(&format!("{model}.binding-inventory.json"));
        let binding = Binding::from_inventory_json(&inventory, &Options::default()).unwrap();
        assert_eq!(
            binding.to_json(),
            text(&format!("derived/{model}.binding.json")),
            "{model}"
        );

        let runtime = bind(&placement, &binding).unwrap();
        assert_eq!(
            runtime.to_json(),
            text(&format!("derived/{model}.bound-runtime.json")),
            "{model}"
        );
        let again = project_placement(&runtime, None).unwrap();
        assert_eq!(again.digest(), placement.digest(), "{model} round trip");
    }
}

#[test]
fn tp_runtime_inventory_is_also_a_placement_inventory() {
    let inventory = bytes("01_tp_sharded_2d.runtime-inventory.json");
    let placement = Placement::from_inventory_json(&inventory, &Options::default()).unwrap();
    assert_eq!(placement.to_json(), text("01_tp_sharded_2d.placement.json"));
}

#[test]
fn worked_examples_and_empty_placement() {
    for vector in ["w1", "w2", "w3", "empty"] {
        let expected = json(&format!("{vector}.expected.json"));
        let wire = text(&format!("{vector}.placement.json"));
        let placement = Placement::from_json(&wire, &Options::default()).unwrap();
        assert_eq!(placement.to_json(), wire, "{vector}");
        assert_eq!(
            placement.placement_id(),
            expected["placement_id"],
            "{vector}"
        );
        assert_eq!(placement.digest(), expected["digest"], "{vector}");
        assert_eq!(expected["digest_payload"], wire.as_str());
        let payload = expected["placement_id_payload"].as_str().unwrap();
        assert_eq!(
            format!("sha256:{}", sha256_hex(payload.as_bytes())),
            placement.placement_id()
        );
    }
    for vector in ["w2", "w3"] {
        let expected = json(&format!("{vector}.expected.json"));
        let inventory = bytes(&format!("{vector}.runtime-inventory.json"));
        let runtime = Runtime::from_inventory_json(&inventory, &Options::default()).unwrap();
        assert_eq!(
            runtime.to_json(),
            text(&format!("derived/{vector}.runtime.json"))
        );
        let placement = project_placement(&runtime, None).unwrap();
        assert_eq!(
            placement.to_json(),
            text(&format!("{vector}.placement.json"))
        );
        let binding = project_binding(&runtime, None).unwrap();
        assert_eq!(
            binding.to_json(),
            text(&format!("derived/{vector}.binding.json"))
        );
        for entry in expected["fragment_id_payloads"].as_array().unwrap() {
            let fragment = runtime
                .fragments()
                .iter()
                .find(|f| f.fragment_id == entry["runtime_fragment_id"].as_str().unwrap())
                .unwrap();
            let id = weight_manifest::placement_fragment_id(fragment);
            assert_eq!(id, entry["placement_fragment_id"].as_str().unwrap());
            let payload = entry["payload"].as_str().unwrap();
            assert_eq!(format!("logical:{}", sha256_hex(payload.as_bytes())), id);
        }
    }
}

/// The vendored copy is the reference's, byte for byte: every file has the SHA-256
/// recorded when it was vendored (`tests/vectors/reference.sha256`, made from the
/// reference's folder; `scripts/check-reference-drift.sh DIR` compares the two folders),
/// and no file is missing or added.
#[test]
fn vendored_vectors_have_their_recorded_checksums() {
    let sums = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/reference.sha256");
    let sums = fs::read_to_string(sums).unwrap();
    let mut listed = Vec::new();
    for line in sums.lines() {
        let (sum, name) = line.split_once("  ").expect("`sum  name` lines");
        let bytes = fs::read(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            sha256_hex(&bytes),
            sum,
            "{name} differs from the reference's"
        );
        listed.push(name.to_owned());
    }
    let mut present = Vec::new();
    for sub in ["", "derived"] {
        for entry in fs::read_dir(dir().join(sub)).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_file() {
                let name = Path::new(sub).join(entry.file_name());
                present.push(name.to_string_lossy().into_owned());
            }
        }
    }
    listed.sort();
    present.sort();
    assert_eq!(listed, present, "vendored files and checksums differ");
}
