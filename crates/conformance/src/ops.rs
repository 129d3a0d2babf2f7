//! The operations of contract §14, over text inputs: the one entry point the CLI, the
//! conformance testee and the bindings' testees share.

use std::borrow::Cow;

use weight_manifest::inventory::{BINDING_INVENTORY_LABEL, RUNTIME_INVENTORY_LABEL};
pub use weight_manifest::wire::{FixtureInput as OpInput, FixtureOp as Op};
use weight_manifest::Error;
use weight_manifest::Value;
use weight_manifest::{project_binding_value, project_placement_value};
use weight_manifest::{AddressSemantics, Limits, Options};
use weight_manifest::{Binding, Fences, Placement, Plan, Runtime};

use weight_manifest_mooncake::{
    export, import, plan_transfer_json, validate_bindings, ExportOptions, MooncakeBinding,
    MooncakePlacement, MooncakeStorageManifest,
};

use crate::content;
use crate::outcome::need;
pub use crate::outcome::{OpResult, RequestError};

/// Runs `op` on `input` with every document read under `limits`: `Err` for an unusable
/// request, `Ok(Err)` for a rejection.
pub fn run(
    op: Op,
    input: &OpInput,
    limits: &Limits,
) -> Result<Result<OpResult, Error>, RequestError> {
    let options = Options::default().with_limits(*limits);
    let read_placement = |text: &[u8]| Placement::from_json(text, &options);
    let given = input
        .address_semantics
        .as_deref()
        .map(|s| Value::Str(Cow::Borrowed(s)));
    // The fixture's option is any string: checked where §10.2 puts it.
    let read_runtime_inventory = |text: &[u8]| {
        AddressSemantics::for_text(text, given.as_ref(), RUNTIME_INVENTORY_LABEL, limits)
            .and_then(|a| Runtime::from_inventory_json(text, &options.with_address_semantics(a)))
    };
    let read_binding_inventory = |text: &[u8]| {
        AddressSemantics::for_text(text, given.as_ref(), BINDING_INVENTORY_LABEL, limits)
            .and_then(|a| Binding::from_inventory_json(text, &options.with_address_semantics(a)))
    };
    let placement_id = input
        .placement_id
        .as_deref()
        .map(|s| Value::Str(Cow::Borrowed(s)));
    let placement_id = placement_id.as_ref();
    let document = || need(input.document.as_ref(), "document");
    Ok(match op {
        Op::PlacementParse => read_placement(document()?).map(|p| OpResult::placement(&p)),
        Op::PlacementFromInventory => {
            Placement::from_inventory_json(document()?, &options).map(|p| OpResult::placement(&p))
        }
        Op::RuntimeFromInventory => {
            read_runtime_inventory(document()?).map(|r| OpResult::runtime(&r))
        }
        Op::BindingFromInventory => {
            read_binding_inventory(document()?).map(|b| OpResult::binding(&b))
        }
        Op::ProjectPlacement => read_runtime_inventory(document()?)
            .and_then(|r| project_placement_value(&r, placement_id))
            .map(|p| OpResult::placement(&p)),
        Op::ProjectBinding => read_runtime_inventory(document()?)
            .and_then(|r| project_binding_value(&r, placement_id))
            .map(|b| OpResult::binding(&b)),
        Op::Bind => {
            let placement_text = need(input.placement.as_ref(), "placement")?;
            let binding_text = need(input.binding.as_ref(), "binding")?;
            read_placement(placement_text)
                .and_then(|p| {
                    let b = read_binding_inventory(binding_text)?;
                    weight_manifest::bind(&p, &b)
                })
                .map(|r| OpResult::runtime(&r))
        }
        Op::RuntimeParse => {
            Runtime::from_json(document()?, &options).map(|r| OpResult::runtime(&r))
        }
        Op::BindingParse => {
            Binding::from_json(document()?, &options).map(|b| OpResult::binding(&b))
        }
        Op::Coverage => read_placement(document()?).and_then(|p| {
            let coverage = weight_manifest::coverage(&p, limits)?;
            if input.require_complete == Some(true) {
                coverage.require_complete()?;
            }
            Ok(OpResult {
                report: Some(coverage.to_json()),
                ..OpResult::default()
            })
        }),
        Op::Plan => {
            let source_text = need(input.source.as_ref(), "source")?;
            let target_text = need(input.target.as_ref(), "target")?;
            let defaults = weight_manifest::PlanLimits::default();
            let limits = weight_manifest::PlanLimits {
                max_regions: input.max_regions.unwrap_or(defaults.max_regions),
                max_segments: input.max_segments.unwrap_or(defaults.max_segments),
                max_geometry_work: limits.max_geometry_work,
            };
            read_placement(source_text)
                .and_then(|s| {
                    let t = read_placement(target_text)?;
                    match &input.quantization {
                        Some(text) => {
                            let q = weight_manifest::Quantization::from_json(text, &options)?;
                            weight_manifest::plan_quantized(&s, &t, &q, &limits)
                        }
                        None => weight_manifest::plan(&s, &t, &limits),
                    }
                })
                .map(|p| OpResult {
                    plan: Some(p.to_json()),
                    plan_id: Some(p.plan_id().to_owned()),
                    ..OpResult::default()
                })
        }
        Op::ContentPartial | Op::ContentBlockValues | Op::ContentCombine | Op::ContentManifest => {
            content::run(op, input, limits)?
        }
        Op::MooncakeValidate => {
            let text = need(input.mooncake.as_ref(), "mooncake")?;
            MooncakePlacement::from_json(text, &options).map(|p| OpResult {
                canonical: Some(p.to_json()),
                placement_id: Some(p.placement_id().to_owned()),
                digest: Some(p.digest()),
                topology_id: Some(p.topology_id().to_owned()),
                ..OpResult::default()
            })
        }
        Op::MooncakeExport => {
            let text = document()?;
            // The placement first, then the overrides: a rejection names the first at fault.
            read_placement(text)
                .and_then(|placement| {
                    let overrides = match input.overrides.as_ref() {
                        Some(o) => ExportOptions::from_overrides_json(o.as_bytes(), &options)?,
                        None => ExportOptions::default(),
                    };
                    export(&placement, &overrides)
                })
                .map(|p| OpResult {
                    canonical: Some(p.to_json()),
                    placement_id: Some(p.placement_id().to_owned()),
                    digest: Some(p.digest()),
                    topology_id: Some(p.topology_id().to_owned()),
                    ..OpResult::default()
                })
        }
        Op::MooncakeImport => {
            let text = need(input.mooncake.as_ref(), "mooncake")?;
            MooncakePlacement::from_json(text, &options)
                .and_then(|m| import(&m))
                .map(|imported| OpResult::placement(&imported.placement))
        }
        Op::MooncakePlan => {
            let source_text = need(input.source.as_ref(), "source")?;
            let target_text = need(input.target.as_ref(), "target")?;
            let plan_limits = weight_manifest::PlanLimits {
                max_geometry_work: limits.max_geometry_work,
                ..weight_manifest::PlanLimits::default()
            };
            plan_transfer_json(source_text, target_text, &options, &plan_limits).map(|regions| {
                OpResult {
                    mooncake_plan: Some(regions),
                    ..OpResult::default()
                }
            })
        }
        Op::MooncakeBinding => {
            let bindings_text = need(input.mooncake.as_ref(), "mooncake")?;
            let placement_text = need(input.placement.as_ref(), "placement")?;
            // The bindings first (§20.10), then the placement (§20.3), then their check.
            MooncakeBinding::list_from_json(bindings_text, &options)
                .and_then(|list| {
                    let m = MooncakePlacement::from_json(placement_text, &options)?;
                    validate_bindings(&m, &list)
                })
                .map(|()| OpResult::default())
        }
        Op::MooncakeStorage => {
            let text = need(input.mooncake.as_ref(), "mooncake")?;
            MooncakeStorageManifest::from_json(text, &options).map(|m| OpResult {
                mooncake_text: Some(m.to_json()),
                digest: Some(m.digest()),
                ..OpResult::default()
            })
        }
        Op::PlanBind => {
            let plan_text = need(input.plan.as_ref(), "plan")?;
            let source_text = need(input.source_binding.as_ref(), "source_binding")?;
            let target_text = need(input.target_binding.as_ref(), "target_binding")?;
            let fences = Fences {
                source_generation: input.source_generation,
                target_generation: input.target_generation,
            };
            // §17.4: the plan is read first, then each binding manifest (§9.2).
            Plan::from_json(plan_text, &options)
                .and_then(|plan| {
                    let source = Binding::from_json(source_text, &options)?;
                    let target = Binding::from_json(target_text, &options)?;
                    weight_manifest::bind_plan(&plan, &source, &target, &fences)
                })
                .map(|b| OpResult {
                    bound_plan_id: Some(b.bound_plan_id().to_owned()),
                    bound_plan: Some(b.into_json()),
                    ..OpResult::default()
                })
        }
    })
}
