//! Mooncake's released formats (`mooncake.reshard` 0.3.13, the PyPI wheel
//! `mooncake-transfer-engine-non-cuda`), natively: the placement
//! ([`MooncakePlacement`], upstream's `WeightPlacementManifest`) read strictly, validated
//! by upstream's rules under this project's codes and written back byte for byte; and the
//! Store's manifest ([`MooncakeStorageManifest`], upstream's `WeightManifest`).
//!
//! This is upstream's format, not this project's contract: its own schema
//! (`schema/mooncake-placement.schema.json`), its own identities (`placement_id`,
//! `topology_id`, `sha256:` fragment ids) and its own rules (docs/contract.md §20).

mod aliases;
mod binding;
mod binding_check;
mod binding_convert;
mod boxes;
mod choice;
mod convert;
mod cover;
mod descriptor;
mod draft;
mod fast;
mod fields;
mod format;
mod fragments;
mod generation;
mod model;
mod overrides;
mod placement;
mod read;
mod storage;
mod storage_write;
mod stored;
#[cfg(test)]
mod tests;
mod topology;
mod transfer;
mod wire;
mod write;

pub use binding::{MooncakeBinding, MooncakeBindingFragment};
pub use binding_check::validate_bindings;
pub use binding_convert::{export_binding, import_binding, ImportedBinding};
pub use choice::MooncakeReplicas;
pub use convert::{export, import, import_owned, ExportOptions, Imported};
pub use format::{is_mooncake_placement, is_mooncake_store};
pub use generation::check_generations;
pub use model::MooncakePlacement;
pub use model::{Axis, AxisKind, Fragment, Part, Participant, Rank, Semantics, Tensor, Topology};
pub use placement::{generated_fragment_id, MooncakeInput};
pub use storage::{MooncakeStorageManifest, StoredFragment};
pub use stored::import_storage;
pub use transfer::{
    plan_transfer, plan_transfer_json, regions_to_json, MooncakeRegion, MooncakeSource,
};
