//! The values of Mooncake's placement format, as `mooncake.reshard` 0.3.13 defines them.
//!
//! A [`MooncakePlacement`](crate::MooncakePlacement) holds these only in validated,
//! canonical order; the pieces are plain data so that converters can build them.

/// One of the four parallel axes, in Mooncake's canonical order dp, pp, ep, tp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AxisKind {
    /// Data parallel.
    Dp,
    /// Pipeline parallel.
    Pp,
    /// Expert parallel.
    Ep,
    /// Tensor parallel.
    Tp,
}

impl AxisKind {
    /// The four kinds in canonical order.
    pub const ALL: [AxisKind; 4] = [AxisKind::Dp, AxisKind::Pp, AxisKind::Ep, AxisKind::Tp];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AxisKind::Dp => "dp",
            AxisKind::Pp => "pp",
            AxisKind::Ep => "ep",
            AxisKind::Tp => "tp",
        }
    }

    /// The kind spelt `s`, if any.
    pub fn parse(s: &str) -> Option<AxisKind> {
        AxisKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A participant's coordinates (Mooncake's `ParallelRank`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rank {
    /// Data-parallel coordinate.
    pub dp: u64,
    /// Tensor-parallel coordinate.
    pub tp: u64,
    /// Pipeline-parallel coordinate.
    pub pp: u64,
    /// Expert-parallel coordinate.
    pub ep: u64,
}

impl Rank {
    /// The coordinate on axis `kind`.
    pub fn get(&self, kind: AxisKind) -> u64 {
        match kind {
            AxisKind::Dp => self.dp,
            AxisKind::Pp => self.pp,
            AxisKind::Ep => self.ep,
            AxisKind::Tp => self.tp,
        }
    }

    /// The coordinates on `kinds`, in that order.
    pub(crate) fn project(&self, kinds: &[AxisKind]) -> Vec<u64> {
        kinds.iter().map(|&k| self.get(k)).collect()
    }
}

/// How an axis places a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// The axis's ranks partition dimension `dim` of the tensor.
    Split {
        /// The split dimension.
        dim: u64,
    },
    /// Each rank of the axis holds an independent complete copy.
    Replicated,
    /// Only the ranks that hold fragments own the tensor.
    Ownership,
}

/// One declared parallel axis of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Axis {
    /// The axis.
    pub kind: AxisKind,
    /// What it means for the tensor.
    pub semantics: Semantics,
}

/// A topology participant: a name and its coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participant {
    /// The participant's name, unique in its topology.
    pub participant_id: String,
    /// Its coordinates, unique in its topology.
    pub rank: Rank,
}

/// The axis sizes and the participants (Mooncake's `ParallelTopology`); participants are
/// sorted by participant_id once validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Tensor-parallel size.
    pub tp_size: u64,
    /// Pipeline-parallel size.
    pub pp_size: u64,
    /// Expert-parallel size.
    pub ep_size: u64,
    /// Data-parallel size.
    pub dp_size: u64,
    /// The participants.
    pub participants: Vec<Participant>,
}

impl Topology {
    /// The size of axis `kind`.
    pub fn size(&self, kind: AxisKind) -> u64 {
        match kind {
            AxisKind::Dp => self.dp_size,
            AxisKind::Pp => self.pp_size,
            AxisKind::Ep => self.ep_size,
            AxisKind::Tp => self.tp_size,
        }
    }
}

/// A logical tensor (Mooncake's `TensorDescriptor`); `parallel_axes` in canonical kind
/// order once validated.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tensor {
    /// The tensor's name.
    pub tensor_id: String,
    /// Extents of the whole tensor.
    pub global_shape: Vec<u64>,
    /// Element type name.
    pub dtype: String,
    /// Bytes per element.
    pub itemsize: u64,
    /// Sorted, distinct sharded dimensions (exactly the split dims).
    pub shard_dims: Vec<u64>,
    /// Opaque layout identity.
    pub layout_fingerprint: String,
    /// The declared axes.
    pub parallel_axes: Vec<Axis>,
    /// Layer index.
    pub layer_id: Option<u64>,
    /// Expert index.
    pub expert_id: Option<u64>,
}

impl Tensor {
    /// The kinds declared with semantics matching `pick`, in canonical order.
    pub(crate) fn kinds(&self, pick: fn(&Semantics) -> bool) -> Vec<AxisKind> {
        self.parallel_axes
            .iter()
            .filter(|a| pick(&a.semantics))
            .map(|a| a.kind)
            .collect()
    }

    /// Everything of the descriptor but its id: the tensors of one alias group must agree
    /// on it (upstream's alias descriptor rule).
    pub(crate) fn alias_descriptor(&self) -> AliasDescriptor<'_> {
        (
            &self.global_shape,
            &self.dtype,
            self.itemsize,
            &self.shard_dims,
            &self.parallel_axes,
            self.layer_id,
            self.expert_id,
            &self.layout_fingerprint,
        )
    }
}

/// [`Tensor::alias_descriptor`]: a descriptor without its id.
pub(crate) type AliasDescriptor<'a> = (
    &'a Vec<u64>,
    &'a String,
    u64,
    &'a Vec<u64>,
    &'a Vec<Axis>,
    Option<u64>,
    Option<u64>,
    &'a String,
);

/// A logical box of a tensor held by one rank (Mooncake's `PlacementFragment`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fragment {
    /// The fragment's id (any non-empty string; generated ids are `sha256:`).
    pub placement_fragment_id: String,
    /// The tensor.
    pub tensor_id: String,
    /// Offset of the box.
    pub global_offset: Vec<u64>,
    /// Extents of the box.
    pub local_shape: Vec<u64>,
    /// Bytes of the box.
    pub nbytes: u64,
    /// The holder.
    pub rank: Rank,
    /// Virtual pipeline stage, when assigned.
    pub pipeline_stage_id: Option<u64>,
    /// Empty, or at least two tensor ids including the own one, sorted.
    pub aliases: Vec<String>,
}

/// One participant's fragments (Mooncake's `WeightPlacementPart`), sorted by
/// placement_fragment_id once validated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// The participant.
    pub participant_id: String,
    /// Its rank.
    pub rank: Rank,
    /// Its fragments.
    pub fragments: Vec<Fragment>,
}

/// A complete Mooncake placement (`mooncake.reshard.weight.WeightPlacementManifest`),
/// validated by every rule upstream applies, held in upstream's canonical order: tensors
/// by tensor_id, parts by participant_id, each part's fragments by placement_fragment_id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MooncakePlacement {
    pub(crate) resource_id: String,
    pub(crate) revision: String,
    pub(crate) weight_generation: u64,
    pub(crate) placement_set_id: String,
    pub(crate) placement_id: String,
    pub(crate) topology: Topology,
    pub(crate) topology_id: String,
    pub(crate) tensors: Vec<Tensor>,
    pub(crate) parts: Vec<Part>,
}
