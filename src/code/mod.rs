//! The stable error codes of the contract (contract §18).
//!
//! One variant per rule family; [`Code::as_str`] is the wire spelling that conformance
//! fixtures compare.

use std::fmt;
use std::str::FromStr;

/// A stable error code from contract §18.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Code {
    /// `invalid_json`
    InvalidJson,
    /// `duplicate_key`
    DuplicateKey,
    /// `non_finite_number`
    NonFiniteNumber,
    /// `not_an_object`
    NotAnObject,
    /// `fields_mismatch`
    FieldsMismatch,
    /// `missing_field`
    MissingField,
    /// `not_a_sequence`
    NotASequence,
    /// `wrong_element_type`
    WrongElementType,
    /// `not_an_integer`
    NotAnInteger,
    /// `below_minimum`
    BelowMinimum,
    /// `u64_overflow`
    U64Overflow,
    /// `address_range_overflow`
    AddressRangeOverflow,
    /// `empty_string`
    EmptyString,
    /// `empty_shape`
    EmptyShape,
    /// `partition_dim_out_of_range`
    PartitionDimOutOfRange,
    /// `shard_dims_duplicate`
    ShardDimsDuplicate,
    /// `shard_dims_unsorted`
    ShardDimsUnsorted,
    /// `shard_dims_out_of_range`
    ShardDimsOutOfRange,
    /// `partition_dim_conflict`
    PartitionDimConflict,
    /// `aliases_invalid`
    AliasesInvalid,
    /// `aliases_duplicate`
    AliasesDuplicate,
    /// `duplicate_tensor_id`
    DuplicateTensorId,
    /// `duplicate_fragment_id`
    DuplicateFragmentId,
    /// `duplicate_logical_fragment`
    DuplicateLogicalFragment,
    /// `unknown_tensor_id`
    UnknownTensorId,
    /// `fragment_rank_mismatch`
    FragmentRankMismatch,
    /// `fragment_out_of_bounds`
    FragmentOutOfBounds,
    /// `replicated_fragment_offset`
    ReplicatedFragmentOffset,
    /// `replicated_fragment_incomplete`
    ReplicatedFragmentIncomplete,
    /// `non_shard_axis_offset`
    NonShardAxisOffset,
    /// `non_shard_axis_shape`
    NonShardAxisShape,
    /// `nbytes_mismatch`
    NbytesMismatch,
    /// `fragment_overlap`
    FragmentOverlap,
    /// `placement_id_mismatch`
    PlacementIdMismatch,
    /// `digest_format`
    DigestFormat,
    /// `not_contiguous`
    NotContiguous,
    /// `stride_rank_mismatch`
    StrideRankMismatch,
    /// `non_canonical_stride`
    NonCanonicalStride,
    /// `byte_offset_unaligned`
    ByteOffsetUnaligned,
    /// `address_semantics_invalid`
    AddressSemanticsInvalid,
    /// `offsets_require_view_semantics`
    OffsetsRequireViewSemantics,
    /// `lease_generation_mismatch`
    LeaseGenerationMismatch,
    /// `inconsistent_lease_generations`
    InconsistentLeaseGenerations,
    /// `generation_mismatch`
    GenerationMismatch,
    /// `descriptor_mismatch`
    DescriptorMismatch,
    /// `address_overlap`
    AddressOverlap,
    /// `duplicate_binding_fragment`
    DuplicateBindingFragment,
    /// `duplicate_runtime_fragment_id`
    DuplicateRuntimeFragmentId,
    /// `missing_lease_id`
    MissingLeaseId,
    /// `missing_generation`
    MissingGeneration,
    /// `model_id_mismatch`
    ModelIdMismatch,
    /// `revision_mismatch`
    RevisionMismatch,
    /// `binding_placement_id_mismatch`
    BindingPlacementIdMismatch,
    /// `digest_mismatch`
    DigestMismatch,
    /// `unknown_binding_fragment`
    UnknownBindingFragment,
    /// `missing_binding_fragment`
    MissingBindingFragment,
    /// `binding_nbytes_mismatch`
    BindingNbytesMismatch,
    /// `adapt_rules_invalid`: an adapter rules file has the wrong shape, or a rule value is
    /// out of range for the checkpoint or the grid (a stage, dim, layer or expert), at the
    /// pointer of the member at fault (added by this implementation).
    AdaptRulesInvalid,
    /// `adapt_regex_invalid`: a rule's `match` is not a valid regex, or has a named group
    /// other than `layer` and `expert` (added by this implementation).
    AdaptRegexInvalid,
    /// `adapt_unknown_action`: a rule's action names no known action (added by this
    /// implementation).
    AdaptUnknownAction,
    /// `adapt_unmatched_tensor`: no rule matches a checkpoint tensor; the message names it
    /// (added by this implementation).
    AdaptUnmatchedTensor,
    /// `adapt_uneven_split`: a split, the experts over ep, or the layers over pp do not
    /// divide evenly; the message names the tensor, the dim and the sizes (added by this
    /// implementation).
    AdaptUnevenSplit,
    /// `adapt_header_invalid`: a safetensors header or index is not valid, or describes a
    /// tensor the contract cannot (added by this implementation).
    AdaptHeaderInvalid,
    /// `adapt_grid_invalid`: an adapter grid size is 0, or the placement would exceed the
    /// fragment limit (added by this implementation).
    AdaptGridInvalid,
    /// `plan_model_mismatch`: the source and target placements of a reshard plan name a
    /// different model_id or revision (added by this implementation).
    PlanModelMismatch,
    /// `plan_tensor_mismatch`: the source and target placements of a reshard plan differ
    /// in their tensor sets or in a descriptor field other than the shard dims (added by
    /// this implementation).
    PlanTensorMismatch,
    /// `plan_uncovered_tensor`: no source cover tiles a tensor the target needs: neither
    /// the distinct source boxes nor any single DP replica (added by this implementation).
    PlanUncoveredTensor,
    /// `plan_limit_exceeded`: a reshard plan would exceed its region or segment limit
    /// (added by this implementation).
    PlanLimitExceeded,
    /// `coverage_incomplete`: a coverage report that was required to be complete is not
    /// (added by this implementation).
    CoverageIncomplete,
    /// `plan_document_invalid`: a reshard plan document is not a plan: not an
    /// object of the plan schema's members and types (the message names the
    /// problem) (added by this implementation).
    PlanDocumentInvalid,
    /// `plan_id_mismatch`: a reshard plan document's plan_id is not the id of its
    /// contents (added by this implementation).
    PlanIdMismatch,
    /// `plan_binding_placement_id_mismatch`: a binding's placement_id differs from
    /// the placement_id the plan names for its side (added by this implementation).
    PlanBindingPlacementIdMismatch,
    /// `plan_binding_digest_mismatch`: a binding's placement_digest differs from
    /// the digest the plan names for its side (added by this implementation).
    PlanBindingDigestMismatch,
    /// `plan_binding_generation_mismatch`: a binding's generation differs from the
    /// generation the caller expects: the binding is stale (added by this
    /// implementation).
    PlanBindingGenerationMismatch,
    /// `plan_binding_fragment_missing`: a fragment a plan region reads or writes is
    /// not in the binding of its side (added by this implementation).
    PlanBindingFragmentMissing,
    /// `plan_binding_range_invalid`: a plan region's bytes do not lie inside the
    /// bound fragment, or an address or byte total is not representable in a u64
    /// (added by this implementation).
    PlanBindingRangeInvalid,
    /// `limit_exceeded`: a document is over one of its reader's limits (size, nesting
    /// depth, string length, dimensions per tensor, tensors or fragments per manifest);
    /// the message names the limit and its value (added by this implementation).
    LimitExceeded,
    /// `bound_plan_document_invalid`: a bound plan document is not an object of the bound
    /// plan schema's members and types (the message names the problem) (added by this
    /// implementation).
    BoundPlanDocumentInvalid,
    /// `bound_plan_id_mismatch`: a bound plan document's bound_plan_id is not the id of its
    /// contents (added by this implementation).
    BoundPlanIdMismatch,
    /// `coverage_document_invalid`: a coverage report document is not an object of the
    /// coverage schema's members and types, or its tensor counts disagree with its
    /// tensors (added by this implementation).
    CoverageDocumentInvalid,
}

impl Code {
    /// Every code: the contract's table in its order, then the codes added by this
    /// implementation.
    pub const ALL: &'static [Code] = &[
        Code::InvalidJson,
        Code::DuplicateKey,
        Code::NonFiniteNumber,
        Code::NotAnObject,
        Code::FieldsMismatch,
        Code::MissingField,
        Code::NotASequence,
        Code::WrongElementType,
        Code::NotAnInteger,
        Code::BelowMinimum,
        Code::U64Overflow,
        Code::AddressRangeOverflow,
        Code::EmptyString,
        Code::EmptyShape,
        Code::PartitionDimOutOfRange,
        Code::ShardDimsDuplicate,
        Code::ShardDimsUnsorted,
        Code::ShardDimsOutOfRange,
        Code::PartitionDimConflict,
        Code::AliasesInvalid,
        Code::AliasesDuplicate,
        Code::DuplicateTensorId,
        Code::DuplicateFragmentId,
        Code::DuplicateLogicalFragment,
        Code::UnknownTensorId,
        Code::FragmentRankMismatch,
        Code::FragmentOutOfBounds,
        Code::ReplicatedFragmentOffset,
        Code::ReplicatedFragmentIncomplete,
        Code::NonShardAxisOffset,
        Code::NonShardAxisShape,
        Code::NbytesMismatch,
        Code::FragmentOverlap,
        Code::PlacementIdMismatch,
        Code::DigestFormat,
        Code::NotContiguous,
        Code::StrideRankMismatch,
        Code::NonCanonicalStride,
        Code::ByteOffsetUnaligned,
        Code::AddressSemanticsInvalid,
        Code::OffsetsRequireViewSemantics,
        Code::LeaseGenerationMismatch,
        Code::InconsistentLeaseGenerations,
        Code::GenerationMismatch,
        Code::DescriptorMismatch,
        Code::AddressOverlap,
        Code::DuplicateBindingFragment,
        Code::DuplicateRuntimeFragmentId,
        Code::MissingLeaseId,
        Code::MissingGeneration,
        Code::ModelIdMismatch,
        Code::RevisionMismatch,
        Code::BindingPlacementIdMismatch,
        Code::DigestMismatch,
        Code::UnknownBindingFragment,
        Code::MissingBindingFragment,
        Code::BindingNbytesMismatch,
        Code::AdaptRulesInvalid,
        Code::AdaptRegexInvalid,
        Code::AdaptUnknownAction,
        Code::AdaptUnmatchedTensor,
        Code::AdaptUnevenSplit,
        Code::AdaptHeaderInvalid,
        Code::AdaptGridInvalid,
        Code::PlanModelMismatch,
        Code::PlanTensorMismatch,
        Code::PlanUncoveredTensor,
        Code::PlanLimitExceeded,
        Code::CoverageIncomplete,
        Code::PlanDocumentInvalid,
        Code::PlanIdMismatch,
        Code::PlanBindingPlacementIdMismatch,
        Code::PlanBindingDigestMismatch,
        Code::PlanBindingGenerationMismatch,
        Code::PlanBindingFragmentMissing,
        Code::PlanBindingRangeInvalid,
        Code::LimitExceeded,
        Code::BoundPlanDocumentInvalid,
        Code::BoundPlanIdMismatch,
        Code::CoverageDocumentInvalid,
    ];

    /// The snake_case spelling used on the wire and in fixtures.
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::InvalidJson => "invalid_json",
            Code::DuplicateKey => "duplicate_key",
            Code::NonFiniteNumber => "non_finite_number",
            Code::NotAnObject => "not_an_object",
            Code::FieldsMismatch => "fields_mismatch",
            Code::MissingField => "missing_field",
            Code::NotASequence => "not_a_sequence",
            Code::WrongElementType => "wrong_element_type",
            Code::NotAnInteger => "not_an_integer",
            Code::BelowMinimum => "below_minimum",
            Code::U64Overflow => "u64_overflow",
            Code::AddressRangeOverflow => "address_range_overflow",
            Code::EmptyString => "empty_string",
            Code::EmptyShape => "empty_shape",
            Code::PartitionDimOutOfRange => "partition_dim_out_of_range",
            Code::ShardDimsDuplicate => "shard_dims_duplicate",
            Code::ShardDimsUnsorted => "shard_dims_unsorted",
            Code::ShardDimsOutOfRange => "shard_dims_out_of_range",
            Code::PartitionDimConflict => "partition_dim_conflict",
            Code::AliasesInvalid => "aliases_invalid",
            Code::AliasesDuplicate => "aliases_duplicate",
            Code::DuplicateTensorId => "duplicate_tensor_id",
            Code::DuplicateFragmentId => "duplicate_fragment_id",
            Code::DuplicateLogicalFragment => "duplicate_logical_fragment",
            Code::UnknownTensorId => "unknown_tensor_id",
            Code::FragmentRankMismatch => "fragment_rank_mismatch",
            Code::FragmentOutOfBounds => "fragment_out_of_bounds",
            Code::ReplicatedFragmentOffset => "replicated_fragment_offset",
            Code::ReplicatedFragmentIncomplete => "replicated_fragment_incomplete",
            Code::NonShardAxisOffset => "non_shard_axis_offset",
            Code::NonShardAxisShape => "non_shard_axis_shape",
            Code::NbytesMismatch => "nbytes_mismatch",
            Code::FragmentOverlap => "fragment_overlap",
            Code::PlacementIdMismatch => "placement_id_mismatch",
            Code::DigestFormat => "digest_format",
            Code::NotContiguous => "not_contiguous",
            Code::StrideRankMismatch => "stride_rank_mismatch",
            Code::NonCanonicalStride => "non_canonical_stride",
            Code::ByteOffsetUnaligned => "byte_offset_unaligned",
            Code::AddressSemanticsInvalid => "address_semantics_invalid",
            Code::OffsetsRequireViewSemantics => "offsets_require_view_semantics",
            Code::LeaseGenerationMismatch => "lease_generation_mismatch",
            Code::InconsistentLeaseGenerations => "inconsistent_lease_generations",
            Code::GenerationMismatch => "generation_mismatch",
            Code::DescriptorMismatch => "descriptor_mismatch",
            Code::AddressOverlap => "address_overlap",
            Code::DuplicateBindingFragment => "duplicate_binding_fragment",
            Code::DuplicateRuntimeFragmentId => "duplicate_runtime_fragment_id",
            Code::MissingLeaseId => "missing_lease_id",
            Code::MissingGeneration => "missing_generation",
            Code::ModelIdMismatch => "model_id_mismatch",
            Code::RevisionMismatch => "revision_mismatch",
            Code::BindingPlacementIdMismatch => "binding_placement_id_mismatch",
            Code::DigestMismatch => "digest_mismatch",
            Code::UnknownBindingFragment => "unknown_binding_fragment",
            Code::MissingBindingFragment => "missing_binding_fragment",
            Code::BindingNbytesMismatch => "binding_nbytes_mismatch",
            Code::AdaptRulesInvalid => "adapt_rules_invalid",
            Code::AdaptRegexInvalid => "adapt_regex_invalid",
            Code::AdaptUnknownAction => "adapt_unknown_action",
            Code::AdaptUnmatchedTensor => "adapt_unmatched_tensor",
            Code::AdaptUnevenSplit => "adapt_uneven_split",
            Code::AdaptHeaderInvalid => "adapt_header_invalid",
            Code::AdaptGridInvalid => "adapt_grid_invalid",
            Code::PlanModelMismatch => "plan_model_mismatch",
            Code::PlanTensorMismatch => "plan_tensor_mismatch",
            Code::PlanUncoveredTensor => "plan_uncovered_tensor",
            Code::PlanLimitExceeded => "plan_limit_exceeded",
            Code::CoverageIncomplete => "coverage_incomplete",
            Code::PlanDocumentInvalid => "plan_document_invalid",
            Code::PlanIdMismatch => "plan_id_mismatch",
            Code::PlanBindingPlacementIdMismatch => "plan_binding_placement_id_mismatch",
            Code::PlanBindingDigestMismatch => "plan_binding_digest_mismatch",
            Code::PlanBindingGenerationMismatch => "plan_binding_generation_mismatch",
            Code::PlanBindingFragmentMissing => "plan_binding_fragment_missing",
            Code::PlanBindingRangeInvalid => "plan_binding_range_invalid",
            Code::LimitExceeded => "limit_exceeded",
            Code::BoundPlanDocumentInvalid => "bound_plan_document_invalid",
            Code::BoundPlanIdMismatch => "bound_plan_id_mismatch",
            Code::CoverageDocumentInvalid => "coverage_document_invalid",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when a string names no code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCode(pub String);

impl fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown error code: {}", self.0)
    }
}

impl std::error::Error for UnknownCode {}

impl FromStr for Code {
    type Err = UnknownCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCode(s.to_owned()))
    }
}
