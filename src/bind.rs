//! Bind (contract §12): a placement plus a binding to it gives a runtime manifest.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::error::{Code, Error, Result};
use crate::locate::Origin;
use crate::model::runtime::RuntimeHeader;
use crate::model::{construct_runtime, Binding, Placement, Runtime};
use crate::path::Path;
use crate::value::Value;
use crate::wire::{RuntimeBindingFragment, RuntimeFragment};

// The messages of §12's identity checks.
/// model_id differs.
const MODEL_ID: &str = "placement and runtime binding model_id differ";
/// revision differs.
const REVISION: &str = "placement and runtime binding revision differ";
/// placement_id differs.
const ID: &str = "placement_id and runtime binding placement_id differ";
/// The digest differs.
const DIGEST: &str = "placement digest and runtime binding placement digest differ";

/// bind(P, B): checks that B binds P (steps 1–7), then builds and validates the runtime
/// manifest (steps 8–9). The order of B's fragments does not matter.
///
/// ```
///
/// use weight_manifest::{bind, project_binding, project_placement, Options, Runtime};
///
/// let inventory = r#"{"model_id":"m","revision":"r","instance_id":"i","lease_id":"l",
///   "generation":7,"tensors":[{"tensor_id":"norm","global_shape":[4],"dtype":"float32",
///   "itemsize":4,"partition_dim":null,"layout_fingerprint":"fp","is_contiguous":true,
///   "local_shape":[4],"stride":[1],"storage_offset":0,"byte_offset":0,
///   "rank":{"dp":0,"tp":0,"pp":0,"ep":0},"lease_generation":7,"fragment_id":"rt-0",
///   "global_offset":[0],"address":4096,"nbytes":16,"worker_id":"w0","endpoint":"e0",
///   "device":"cuda:0"}]}"#;
/// let runtime = Runtime::from_inventory_json(inventory.as_bytes(), &Options::default())?;
/// let placement = project_placement(&runtime, None)?;
/// let binding = project_binding(&runtime, None)?;
/// let rebound = bind(&placement, &binding)?;
/// assert_eq!(project_placement(&rebound, None)?.digest(), placement.digest());
/// # Ok::<(), weight_manifest::Error>(())
/// ```
pub fn bind(placement: &Placement, binding: &Binding) -> Result<Runtime> {
    let b = binding.as_wire();
    // The identities in the contract's order; the first that differs is the error.
    let same = |equal: bool, code, message| {
        if equal {
            Ok(())
        } else {
            Err(Error::new(code, message))
        }
    };
    same(
        placement.model_id() == b.model_id,
        Code::ModelIdMismatch,
        MODEL_ID,
    )?;
    same(
        placement.revision() == b.revision,
        Code::RevisionMismatch,
        REVISION,
    )?;
    same(
        placement.placement_id() == b.placement_id,
        Code::BindingPlacementIdMismatch,
        ID,
    )?;
    same(
        placement.digest() == b.placement_digest,
        Code::DigestMismatch,
        DIGEST,
    )?;

    // Both lists are sorted by placement_fragment_id and hold distinct ids.
    let bound: HashMap<&str, (usize, &RuntimeBindingFragment)> = b
        .fragments
        .iter()
        .enumerate()
        .map(|(i, f)| (f.placement_fragment_id.as_str(), (i, f)))
        .collect();
    let placed: HashSet<&str> = placement
        .fragments()
        .iter()
        .map(|f| f.placement_fragment_id.as_str())
        .collect();
    if let Some(unknown) = b
        .fragments
        .iter()
        .find(|f| !placed.contains(f.placement_fragment_id.as_str()))
    {
        return Err(Error::new(
            Code::UnknownBindingFragment,
            format!(
                "unknown placement fragment in runtime binding: {}",
                unknown.placement_fragment_id
            ),
        ));
    }
    if let Some(missing) = placement
        .fragments()
        .iter()
        .find(|f| !bound.contains_key(f.placement_fragment_id.as_str()))
    {
        return Err(Error::new(
            Code::MissingBindingFragment,
            format!(
                "missing placement fragment in runtime binding: {}",
                missing.placement_fragment_id
            ),
        ));
    }

    let mut fragments = Vec::with_capacity(placement.fragments().len());
    let mut owners = Vec::with_capacity(placement.fragments().len());
    for logical in placement.fragments() {
        let id = logical.placement_fragment_id.as_str();
        let Some(&(index, physical)) = bound.get(id) else {
            unreachable!("every placement fragment was found in the binding above");
        };
        if physical.nbytes != logical.nbytes {
            return Err(Error::new(
                Code::BindingNbytesMismatch,
                format!("runtime binding byte size does not match placement: {id}"),
            ));
        }
        fragments.push(RuntimeFragment {
            address: physical.address,
            aliases: logical.aliases.clone(),
            device: physical.device.clone(),
            endpoint: physical.endpoint.clone(),
            fragment_id: physical.fragment_id.clone(),
            global_offset: logical.global_offset.clone(),
            lease_generation: b.generation,
            local_shape: logical.local_shape.clone(),
            nbytes: physical.nbytes,
            placement_fragment_id: Some(logical.placement_fragment_id.clone()),
            rank: logical.rank.clone(),
            tensor_id: logical.tensor_id.clone(),
            worker_id: physical.worker_id.clone(),
        });
        owners.push(binding.owner(index).cloned());
    }

    let text = |s: &str| Value::Str(Cow::Owned(s.to_owned()));
    let values = [
        text(placement.model_id()),
        text(placement.revision()),
        text(&b.instance_id),
        text(&b.lease_id),
        text(placement.placement_id()),
        Value::UInt(b.generation),
    ];
    let [model_id, revision, instance_id, lease_id, placement_id, generation] = &values;
    let header = RuntimeHeader {
        model_id,
        revision,
        instance_id,
        lease_id: Some(lease_id),
        placement_id: Some(placement_id),
        generation: Some(generation),
    };
    construct_runtime(
        &Path::Root,
        Origin::default(),
        &header,
        placement.tensors().to_vec(),
        fragments,
        owners,
        crate::limits::DEFAULT_MAX_GEOMETRY_WORK,
    )
    .map_err(|e| e.with_pointer(None))
}
