//! Mooncake's canonical JSON (Python's `json.dumps(sort_keys=True, separators=(",", ":"))`,
//! ASCII-escaped) of a placement and of the identity payloads hashed into its ids.
//!
//! Every object is written with its keys as literals in code point order, so the text is
//! streamed into a buffer or straight into SHA-256 without building a tree.

use weight_manifest::canonical::{write_str, write_u64, HashSink, Sink};

use crate::model::{
    Axis, Fragment, MooncakePlacement, Part, Participant, Rank, Semantics, Tensor, Topology,
};
use crate::wire::key;

/// The tag of the placement id payload.
const PLACEMENT_TAG: &str = "complete-weight-placement";
/// The tag of the topology id payload.
const TOPOLOGY_TAG: &str = "weight-parallel-topology";
/// The tag of a generated fragment id's payload.
const FRAGMENT_TAG: &str = "weight-placement-fragment";

fn member_key<S: Sink + ?Sized>(sink: &mut S, first: bool, name: &str) {
    if !first {
        sink.put(b",");
    }
    sink.put(b"\"");
    sink.put(name.as_bytes());
    sink.put(b"\":");
}

pub(crate) fn ints<S: Sink + ?Sized>(sink: &mut S, values: &[u64]) {
    sink.put(b"[");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            sink.put(b",");
        }
        write_u64(sink, *v);
    }
    sink.put(b"]");
}

pub(crate) fn opt_int<S: Sink + ?Sized>(sink: &mut S, value: Option<u64>) {
    match value {
        Some(v) => write_u64(sink, v),
        None => sink.put(b"null"),
    }
}

pub(crate) fn list<S: Sink + ?Sized, T>(
    sink: &mut S,
    items: &[T],
    mut each: impl FnMut(&mut S, &T),
) {
    sink.put(b"[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            sink.put(b",");
        }
        each(sink, item);
    }
    sink.put(b"]");
}

fn rank<S: Sink + ?Sized>(sink: &mut S, r: &Rank) {
    sink.put(b"{\"dp\":");
    write_u64(sink, r.dp);
    sink.put(b",\"ep\":");
    write_u64(sink, r.ep);
    sink.put(b",\"pp\":");
    write_u64(sink, r.pp);
    sink.put(b",\"tp\":");
    write_u64(sink, r.tp);
    sink.put(b"}");
}

/// An axis as Mooncake writes it.
pub(crate) fn axis<S: Sink + ?Sized>(sink: &mut S, a: &Axis) {
    if let Semantics::Split { dim } = a.semantics {
        sink.put(b"{\"dim\":");
        write_u64(sink, dim);
        sink.put(b",");
    } else {
        sink.put(b"{");
    }
    sink.put(b"\"kind\":\"");
    sink.put(a.kind.as_str().as_bytes());
    sink.put(b"\",\"semantics\":");
    sink.put(match a.semantics {
        Semantics::Split { .. } => b"\"split\"}".as_slice(),
        Semantics::Replicated => b"\"replicated\"}".as_slice(),
        Semantics::Ownership => b"\"ownership\"}".as_slice(),
    });
}

/// A tensor descriptor; `s` writes each string (the storage manifest escapes differently).
pub(crate) fn tensor<S: Sink + ?Sized>(sink: &mut S, t: &Tensor, s: fn(&mut S, &str)) {
    sink.put(b"{");
    member_key(sink, true, key::DTYPE);
    s(sink, &t.dtype);
    member_key(sink, false, key::EXPERT_ID);
    opt_int(sink, t.expert_id);
    member_key(sink, false, key::GLOBAL_SHAPE);
    ints(sink, &t.global_shape);
    member_key(sink, false, key::ITEMSIZE);
    write_u64(sink, t.itemsize);
    member_key(sink, false, key::LAYER_ID);
    opt_int(sink, t.layer_id);
    member_key(sink, false, key::LAYOUT_FINGERPRINT);
    s(sink, &t.layout_fingerprint);
    member_key(sink, false, key::PARALLEL_AXES);
    list(sink, &t.parallel_axes, |k, a| axis(k, a));
    member_key(sink, false, key::SHARD_DIMS);
    ints(sink, &t.shard_dims);
    member_key(sink, false, key::TENSOR_ID);
    s(sink, &t.tensor_id);
    sink.put(b"}");
}

fn ascii<S: Sink + ?Sized>(sink: &mut S, s: &str) {
    write_str(sink, s);
}

/// A fragment: on the wire (`tag` `None`, with its id) or as a generated id's payload.
fn fragment<S: Sink + ?Sized>(sink: &mut S, f: &Fragment, tag: Option<&str>) {
    sink.put(b"{");
    member_key(sink, true, key::ALIASES);
    list(sink, &f.aliases, |k, a| write_str(k, a));
    member_key(sink, false, key::GLOBAL_OFFSET);
    ints(sink, &f.global_offset);
    member_key(sink, false, key::LOCAL_SHAPE);
    ints(sink, &f.local_shape);
    member_key(sink, false, key::NBYTES);
    write_u64(sink, f.nbytes);
    if let Some(stage) = f.pipeline_stage_id {
        member_key(sink, false, key::PIPELINE_STAGE_ID);
        write_u64(sink, stage);
    }
    match tag {
        None => {
            member_key(sink, false, key::PLACEMENT_FRAGMENT_ID);
            write_str(sink, &f.placement_fragment_id);
            member_key(sink, false, key::RANK);
            rank(sink, &f.rank);
        }
        Some(tag) => {
            member_key(sink, false, key::RANK);
            rank(sink, &f.rank);
            member_key(sink, false, weight_manifest::wire::key::SCHEMA);
            write_str(sink, tag);
        }
    }
    member_key(sink, false, key::TENSOR_ID);
    write_str(sink, &f.tensor_id);
    sink.put(b"}");
}

fn participants<S: Sink + ?Sized>(sink: &mut S, items: &[Participant]) {
    list(sink, items, |k, p| {
        k.put(b"{\"participant_id\":");
        write_str(k, &p.participant_id);
        k.put(b",\"rank\":");
        rank(k, &p.rank);
        k.put(b"}");
    });
}

/// The topology: on the wire (with `topology_id`) or as its id's payload (`id` `None`).
fn topology<S: Sink + ?Sized>(sink: &mut S, t: &Topology, id: Option<&str>) {
    sink.put(b"{\"dp_size\":");
    write_u64(sink, t.dp_size);
    sink.put(b",\"ep_size\":");
    write_u64(sink, t.ep_size);
    sink.put(b",\"participants\":");
    participants(sink, &t.participants);
    sink.put(b",\"pp_size\":");
    write_u64(sink, t.pp_size);
    if let Some(id) = id {
        sink.put(b",\"topology_id\":");
        write_str(sink, id);
    } else {
        sink.put(b",\"schema\":");
        write_str(sink, TOPOLOGY_TAG);
    }
    sink.put(b",\"tp_size\":");
    write_u64(sink, t.tp_size);
    sink.put(b"}");
}

fn part<S: Sink + ?Sized>(sink: &mut S, p: &Part) {
    sink.put(b"{\"fragments\":");
    list(sink, &p.fragments, |k, f| fragment(k, f, None));
    sink.put(b",\"participant_id\":");
    write_str(sink, &p.participant_id);
    sink.put(b",\"rank\":");
    rank(sink, &p.rank);
    sink.put(b"}");
}

/// The placement: on the wire (`wire` true) or as its id's payload.
fn placement<S: Sink + ?Sized>(sink: &mut S, m: &MooncakePlacement, wire: bool) {
    sink.put(b"{\"parts\":");
    list(sink, &m.parts, |k, p| part(k, p));
    if wire {
        sink.put(b",\"placement_id\":");
        write_str(sink, &m.placement_id);
    }
    sink.put(b",\"placement_set_id\":");
    write_str(sink, &m.placement_set_id);
    sink.put(b",\"resource_id\":");
    write_str(sink, &m.resource_id);
    if wire {
        sink.put(b",\"resource_kind\":\"model_weight\"");
    }
    sink.put(b",\"revision\":");
    write_str(sink, &m.revision);
    if !wire {
        sink.put(b",\"schema\":");
        write_str(sink, PLACEMENT_TAG);
    }
    sink.put(b",\"tensors\":");
    list(sink, &m.tensors, |k, t| tensor(k, t, ascii::<S>));
    sink.put(b",\"topology\":");
    topology(sink, &m.topology, Some(&m.topology_id));
    sink.put(b",\"weight_generation\":");
    write_u64(sink, m.weight_generation);
    sink.put(b"}");
}

/// The canonical wire text of a validated placement.
pub(crate) fn placement_text(m: &MooncakePlacement) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    placement(&mut out, m, true);
    out
}

/// The placement_id of a placement whose other members are set.
pub(crate) fn placement_id(m: &MooncakePlacement) -> String {
    let mut sink = HashSink::new();
    placement(&mut sink, m, false);
    sink.id("sha256:")
}

/// The topology_id of a topology whose participants are sorted.
pub(crate) fn topology_id(t: &Topology) -> String {
    let mut sink = HashSink::new();
    topology(&mut sink, t, None);
    sink.id("sha256:")
}

/// The id Mooncake generates for a fragment from its contents (aliases sorted).
pub(crate) fn fragment_id(f: &Fragment) -> String {
    let mut sink = HashSink::new();
    fragment(&mut sink, f, Some(FRAGMENT_TAG));
    sink.id("sha256:")
}
