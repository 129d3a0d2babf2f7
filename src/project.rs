//! Projections (contract §11): a runtime snapshot's logical half as a placement, and its
//! physical half as a binding to that placement.

use std::borrow::Cow;

use crate::error::{Code, Error, Result};
use crate::identity;
use crate::model::binding::BindingHeader;
use crate::model::placement::PlacementHeader;
use crate::model::{construct_binding, construct_placement, Binding, Placement, Runtime};
use crate::path::Path;
use crate::rules::values;
use crate::value::Value;
use crate::wire::key;
use crate::wire::{PlacementFragment, RuntimeBindingFragment, RuntimeFragment};

/// The placement_fragment_id of a runtime fragment: its explicit id, else the generated
/// `logical:` id (§7.3).
pub fn placement_fragment_id(fragment: &RuntimeFragment) -> String {
    if let Some(id) = &fragment.placement_fragment_id {
        id.clone()
    } else {
        identity::logical_id_of!(fragment)
    }
}

/// §11.1 project_placement(R, placement_id?). `Some("")` is rejected (`empty_string`);
/// only the canonical id is ever accepted.
pub fn project_placement(runtime: &Runtime, placement_id: Option<&str>) -> Result<Placement> {
    with_argument(placement_id, |id| project_placement_value(runtime, id))
}

/// Runs `project` with the optional placement_id as a document value.
fn with_argument<T>(
    placement_id: Option<&str>,
    project: impl FnOnce(Option<&Value<'_>>) -> Result<T>,
) -> Result<T> {
    project(
        placement_id
            .map(|id| Value::Str(Cow::Borrowed(id)))
            .as_ref(),
    )
}

/// §11.1 with the argument as a document value: a binding may pass any object, and
/// `None` or `null` mean not given.
pub fn project_placement_value(
    runtime: &Runtime,
    placement_id: Option<&Value<'_>>,
) -> Result<Placement> {
    let wire = runtime.as_wire();
    let fragments: Vec<PlacementFragment> = wire
        .fragments
        .iter()
        .map(|f| PlacementFragment {
            aliases: f.aliases.clone(),
            global_offset: f.global_offset.clone(),
            local_shape: f.local_shape.clone(),
            nbytes: f.nbytes,
            placement_fragment_id: placement_fragment_id(f),
            rank: f.rank.clone(),
            tensor_id: f.tensor_id.clone(),
        })
        .collect();
    let argument = match placement_id {
        None | Some(Value::Null) => None,
        // The argument is not part of the document: no pointer.
        Some(value) => Some(
            values::string(value, key::PLACEMENT_ID, &Path::Root)
                .map_err(|e| e.with_pointer(None))?,
        ),
    };
    let held = wire.placement_id.as_deref();
    let id = argument.or(held).map(|id| Value::Str(Cow::Borrowed(id)));
    let from_argument = argument.is_some();
    construct_placement(
        &Path::Root,
        runtime.origin(),
        &PlacementHeader {
            model_id: &Value::Str(Cow::Borrowed(&wire.model_id)),
            revision: &Value::Str(Cow::Borrowed(&wire.revision)),
            placement_id: id.as_ref(),
        },
        wire.tensors.clone(),
        fragments,
        crate::limits::DEFAULT_MAX_GEOMETRY_WORK,
    )
    // The placement_id compared is the argument's, not the document's.
    .map_err(|e| {
        if from_argument && e.code() == Code::PlacementIdMismatch {
            e.with_pointer(None)
        } else {
            e
        }
    })
}

/// What the runtime lacks, the document it was read from lacks: the error points at that
/// document's top-level object (a runtime built in memory has none).
fn lacking(runtime: &Runtime, code: Code, message: &str) -> Error {
    let error = Error::new(code, message);
    if runtime.origin().fragments.is_some() {
        error.with_pointer(Some(String::new()))
    } else {
        error
    }
}

/// §11.2 project_binding(R, placement_id?).
pub fn project_binding(runtime: &Runtime, placement_id: Option<&str>) -> Result<Binding> {
    with_argument(placement_id, |id| project_binding_value(runtime, id))
}

/// §11.2 with the argument as a document value (see [`project_placement_value`]).
pub fn project_binding_value(
    runtime: &Runtime,
    placement_id: Option<&Value<'_>>,
) -> Result<Binding> {
    let wire = runtime.as_wire();
    let Some(lease_id) = wire.lease_id.as_deref() else {
        return Err(lacking(
            runtime,
            Code::MissingLeaseId,
            "runtime manifest has no lease_id for runtime binding",
        ));
    };
    let Some(generation) = wire.generation else {
        return Err(lacking(
            runtime,
            Code::MissingGeneration,
            "runtime manifest has no generation for runtime binding",
        ));
    };
    let placement = project_placement_value(runtime, placement_id)?;
    let fragments: Vec<RuntimeBindingFragment> = wire
        .fragments
        .iter()
        .map(|f| RuntimeBindingFragment {
            address: f.address,
            device: f.device.clone(),
            endpoint: f.endpoint.clone(),
            fragment_id: f.fragment_id.clone(),
            nbytes: f.nbytes,
            placement_fragment_id: placement_fragment_id(f),
            worker_id: f.worker_id.clone(),
        })
        .collect();
    let owners = (0..fragments.len())
        .map(|i| runtime.owner(i).cloned())
        .collect();
    let text = |s: &str| Value::Str(Cow::Owned(s.to_owned()));
    let header_values = [
        text(&wire.model_id),
        text(&wire.revision),
        text(placement.placement_id()),
        text(placement.digest()),
        text(&wire.instance_id),
        text(lease_id),
        Value::UInt(generation),
    ];
    let [model_id, revision, placement_id, placement_digest, instance_id, lease_id, generation] =
        &header_values;
    let header = BindingHeader {
        model_id,
        revision,
        placement_id,
        placement_digest,
        instance_id,
        lease_id,
        generation,
    };
    // The binding's fragments are the runtime's, in order: a duplicate points into the
    // document the runtime was read from. The header is derived, so nothing else is there.
    construct_binding(&Path::Root, runtime.origin(), &header, fragments, owners)
}
