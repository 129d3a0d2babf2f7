//! The published JSON Schemas (draft 2020-12), embedded from `schema/dist/` as generated
//! by `weight-manifest-codegen`.

/// Every published schema file: (file name, contents).
pub const PUBLISHED: &[(&str, &str)] = &[
    (
        "adapter-rules.schema.json",
        include_str!("../schema/dist/adapter-rules.schema.json"),
    ),
    (
        "binding-inventory.schema.json",
        include_str!("../schema/dist/binding-inventory.schema.json"),
    ),
    (
        "binding.schema.json",
        include_str!("../schema/dist/binding.schema.json"),
    ),
    (
        "bound-plan.schema.json",
        include_str!("../schema/dist/bound-plan.schema.json"),
    ),
    (
        "common.schema.json",
        include_str!("../schema/dist/common.schema.json"),
    ),
    (
        "conformance-fixture.schema.json",
        include_str!("../schema/dist/conformance-fixture.schema.json"),
    ),
    (
        "content.schema.json",
        include_str!("../schema/dist/content.schema.json"),
    ),
    (
        "coverage.schema.json",
        include_str!("../schema/dist/coverage.schema.json"),
    ),
    (
        "fence.schema.json",
        include_str!("../schema/dist/fence.schema.json"),
    ),
    (
        "mooncake-binding.schema.json",
        include_str!("../schema/dist/mooncake-binding.schema.json"),
    ),
    (
        "mooncake-placement.schema.json",
        include_str!("../schema/dist/mooncake-placement.schema.json"),
    ),
    (
        "mooncake-storage.schema.json",
        include_str!("../schema/dist/mooncake-storage.schema.json"),
    ),
    (
        "placement-inventory.schema.json",
        include_str!("../schema/dist/placement-inventory.schema.json"),
    ),
    (
        "placement.schema.json",
        include_str!("../schema/dist/placement.schema.json"),
    ),
    (
        "plan.schema.json",
        include_str!("../schema/dist/plan.schema.json"),
    ),
    (
        "quantization.schema.json",
        include_str!("../schema/dist/quantization.schema.json"),
    ),
    (
        "runtime-inventory.schema.json",
        include_str!("../schema/dist/runtime-inventory.schema.json"),
    ),
    (
        "runtime.schema.json",
        include_str!("../schema/dist/runtime.schema.json"),
    ),
    (
        "weight-manifest.bundle.schema.json",
        include_str!("../schema/dist/weight-manifest.bundle.schema.json"),
    ),
];

/// The published schema named `file`, if any.
pub fn published(file: &str) -> Option<&'static str> {
    PUBLISHED
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, text)| *text)
}
