//! The typed fast path of `from_wire` (`Placement::from_wire_owned`) against `from_wire` itself (the manifest written as
//! JSON and read back): equal placements, or the same rejection, on generated manifests
//! and on each of them broken one value at a time.

use crate::error::Result;
use crate::model::Placement;
use crate::wire::PlacementManifest;

fn same(manifest: &PlacementManifest) -> Result<Placement> {
    let fast = Placement::from_wire_owned(manifest.clone());
    let reference = Placement::from_wire(manifest);
    match (&fast, &reference) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.code(), b.code());
            assert_eq!(a.message(), b.message());
            assert_eq!(a.path(), b.path());
        }
        _ => panic!("typed path {fast:?}, from_wire {reference:?}"),
    }
    reference
}

fn manifest() -> PlacementManifest {
    let text = crate::test_support::placement_text(&crate::test_support::small_model());
    serde_json::from_slice(&text).unwrap()
}

#[test]
fn a_generated_manifest_gives_from_wires_placement() {
    let m = manifest();
    assert!(m.fragments.len() > 10);
    same(&m).expect("a generated placement is valid");
}

#[test]
fn each_broken_value_gives_from_wires_rejection() {
    type Edit = fn(&mut PlacementManifest);
    let edits: [Edit; 14] = [
        |m| m.model_id.clear(),
        |m| m.revision = "x".repeat(70_000),
        |m| m.placement_id = Some("sha256:0".to_owned()),
        |m| m.tensors[1].dtype.clear(),
        |m| m.tensors[0].global_shape[0] = 0,
        |m| m.tensors[0].itemsize = 0,
        |m| m.tensors[2].partition_dim = Some(9),
        |m| m.tensors.push(m.tensors[0].clone()),
        |m| m.fragments[3].placement_fragment_id.clear(),
        |m| m.fragments[3].nbytes = 0,
        |m| m.fragments[3].local_shape[0] = 0,
        |m| m.fragments[4].aliases = vec!["b".into(), String::new(), "a".into()],
        |m| m.fragments[4].aliases = vec!["b".into(), "b".into()],
        |m| m.fragments[5].global_offset[0] = u64::MAX,
    ];
    for (i, edit) in edits.iter().enumerate() {
        let mut m = manifest();
        edit(&mut m);
        assert!(same(&m).is_err(), "edit {i} was accepted");
    }
}
