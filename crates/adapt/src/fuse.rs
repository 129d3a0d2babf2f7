//! Fused buffers: checkpoint tensors an engine holds in one buffer (vLLM's `qkv_proj` is q, k
//! and v concatenated on their rows; its `w13_weight` stacks each expert's gate and up rows).
//!
//! A rules file's `fused` entries name the members of one kind of buffer by templates with
//! the placeholders `{layer}` and `{expert}`. Fusing moves no box: it names the buffer a
//! member's fragments live in (their alias) and where in it (the inventory template's
//! offsets). On each rank a buffer is, for each of its experts in ascending order (one block
//! without `stack`), the rank's box of each member in the entry's order along `dim`; a member
//! must therefore be one contiguous run of the buffer, which holds when every dim before
//! `dim` has extent 1 in the rank's boxes.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use regex::Regex;

use crate::errors::error_at;
use crate::tensor_layout::TensorLayout;
use weight_manifest::error::{Code, Error, Result};
use weight_manifest::wire::{AdapterFused, ParallelRank, PlacementFragment};

/// The placeholders a template may have.
const PLACEHOLDERS: [&str; 2] = ["layer", "expert"];

fn invalid(entry: usize, message: impl Into<String>) -> Error {
    error_at(Code::AdaptFusedInvalid, message, format!("/fused/{entry}"))
}

/// A name template compiled to an anchored regex, and the placeholders it has.
#[derive(Clone, Debug)]
struct Template {
    regex: Regex,
    placeholders: Vec<&'static str>,
}

fn template(entry: usize, text: &str) -> Result<Template> {
    let mut pattern = String::from("^");
    let mut placeholders = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        pattern.push_str(&regex::escape(&rest[..open]));
        let close = rest[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or_else(|| invalid(entry, format!("template {text} has an unclosed {{")))?;
        let name = &rest[open + 1..close];
        let Some(known) = PLACEHOLDERS.iter().find(|p| **p == name) else {
            return Err(invalid(
                entry,
                format!(
                    "template {text} has the placeholder {{{name}}}: only {{layer}} and {{expert}}"
                ),
            ));
        };
        if placeholders.contains(known) {
            return Err(invalid(
                entry,
                format!("template {text} has {{{name}}} twice"),
            ));
        }
        placeholders.push(*known);
        let _ = write!(pattern, "(?P<{name}>[0-9]+)");
        rest = &rest[close + 1..];
    }
    pattern.push_str(&regex::escape(rest));
    pattern.push('$');
    let regex = Regex::new(&pattern)
        .map_err(|e| invalid(entry, format!("template {text} does not compile: {e}")))?;
    Ok(Template {
        regex,
        placeholders,
    })
}

/// One compiled `fused` entry.
#[derive(Clone, Debug)]
pub struct FusedRule {
    into: String,
    members: Vec<Template>,
    dim: u64,
    stack: bool,
}

impl FusedRule {
    /// Compiles entry `entry`: the templates, and the placeholders each may have.
    ///
    /// # Errors
    ///
    /// `adapt_fused_invalid` at `/fused/{entry}`: another placeholder, fewer than two
    /// members without `stack`, a member placeholder missing from `into`, or with `stack`
    /// `{expert}` in `into` or missing from a member.
    pub fn compile(entry: usize, wire: &AdapterFused) -> Result<FusedRule> {
        let stack = wire.stack.is_some();
        let into = template(entry, &wire.into)?;
        let members = wire
            .members
            .iter()
            .map(|m| template(entry, m))
            .collect::<Result<Vec<_>>>()?;
        if members.len() < 2 && !stack {
            return Err(invalid(
                entry,
                "a buffer without stack needs at least two members",
            ));
        }
        if stack && into.placeholders.contains(&"expert") {
            return Err(invalid(
                entry,
                format!(
                    "into {} stacks experts, so it cannot name {{expert}}",
                    wire.into
                ),
            ));
        }
        for (member, text) in members.iter().zip(&wire.members) {
            if stack && !member.placeholders.contains(&"expert") {
                return Err(invalid(
                    entry,
                    format!("member {text} of a stack has no {{expert}}"),
                ));
            }
            if let Some(missing) = member
                .placeholders
                .iter()
                .find(|p| !(into.placeholders.contains(p) || stack && **p == "expert"))
            {
                return Err(invalid(
                    entry,
                    format!(
                        "member {text} has {{{missing}}}, which into {} does not",
                        wire.into
                    ),
                ));
            }
        }
        Ok(FusedRule {
            into: wire.into.clone(),
            members,
            dim: wire.dim,
            stack,
        })
    }

    /// The buffer name, member index and expert of `tensor` when one of the members
    /// matches it.
    fn matches(&self, tensor: &str) -> Option<(String, usize, Option<u64>)> {
        self.members.iter().enumerate().find_map(|(index, member)| {
            let captures = member.regex.captures(tensor)?;
            let mut buffer = self.into.clone();
            let mut expert = None;
            for name in &member.placeholders {
                let text = captures.name(name)?.as_str();
                if *name == "expert" {
                    expert = Some(text.parse::<u64>().ok()?);
                    if self.stack {
                        continue;
                    }
                }
                buffer = buffer.replace(&format!("{{{name}}}"), text);
            }
            Some((buffer, index, expert))
        })
    }
}

/// Where one checkpoint tensor sits in its buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The buffer's name (the fragments' alias).
    pub buffer: String,
    /// The `fused` entry.
    pub entry: usize,
    /// The member's index in the entry.
    pub index: usize,
    /// The expert, for a stacked buffer.
    pub expert: Option<u64>,
    /// The dim the members follow each other on.
    pub dim: u64,
}

/// One fused buffer on one rank: its members' fragments (by position in the fragment list)
/// with their byte offsets in it, in buffer order, and its byte size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffer {
    /// (fragment position, byte offset) of each member.
    pub members: Vec<(usize, u64)>,
    /// The buffer's size in bytes.
    pub bytes: u64,
}

/// A buffer's members on a rank before they are ordered: (expert, member index, fragment
/// position).
type Unordered = Vec<(Option<u64>, usize, usize)>;

/// The members of one block of a buffer (the buffer, or one expert of a stack) as they
/// are found: (member index, layout position).
type Blocks = Vec<(usize, usize)>;

/// The fused buffers of one adaptation: each member tensor's place.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fusion {
    members: BTreeMap<String, Member>,
    counts: Vec<usize>,
}

impl Fusion {
    /// The buffer of `tensor`, if it is a member of one.
    pub fn member(&self, tensor: &str) -> Option<&Member> {
        self.members.get(tensor)
    }

    /// Whether no tensor is fused.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Each buffer on each rank, keyed by (rank, buffer name): its members among
    /// `fragments` in the buffer's order (expert, then member) with their byte offsets.
    ///
    /// # Errors
    ///
    /// `adapt_fused_invalid` (at `/fused/{entry}`) when an expert's block on a rank lacks a
    /// member or holds one twice, when members disagree on a dim other than `dim`, or when
    /// a member would not be one contiguous run of the buffer.
    pub fn buffers(
        &self,
        fragments: &[PlacementFragment],
    ) -> Result<BTreeMap<(RankKey, String), Buffer>> {
        let mut grouped: BTreeMap<(RankKey, String), Unordered> = BTreeMap::new();
        for (position, fragment) in fragments.iter().enumerate() {
            if let Some(member) = self.members.get(&fragment.tensor_id) {
                grouped
                    .entry((RankKey::of(&fragment.rank), member.buffer.clone()))
                    .or_default()
                    .push((member.expert, member.index, position));
            }
        }
        let mut out = BTreeMap::new();
        for (key, mut held) in grouped {
            held.sort_unstable();
            let first = &self.members[&fragments[held[0].2].tensor_id];
            let (entry, dim) = (
                first.entry,
                usize::try_from(first.dim).unwrap_or(usize::MAX),
            );
            let count = self.counts[entry];
            let mut placed = Vec::with_capacity(held.len());
            let mut cursor: u64 = 0;
            let reference = &fragments[held[0].2].local_shape;
            for block in held.chunk_by(|a, b| a.0 == b.0) {
                let indices: Vec<usize> = block.iter().map(|b| b.1).collect();
                if indices != (0..count).collect::<Vec<_>>() {
                    return Err(invalid(
                        entry,
                        format!(
                            "buffer {} on rank {}: its members there are {indices:?} of 0..{count}",
                            key.1, key.0
                        ),
                    ));
                }
                for &(_, _, position) in block {
                    let shape = &fragments[position].local_shape;
                    let agrees = shape.len() == reference.len()
                        && shape
                            .iter()
                            .zip(reference)
                            .enumerate()
                            .all(|(d, (a, b))| d == dim || a == b);
                    if !agrees || dim >= shape.len() || shape[..dim].iter().any(|&e| e != 1) {
                        return Err(invalid(
                            entry,
                            format!(
                                "buffer {} on rank {}: member {} of shape {shape:?} does not follow {reference:?} on dim {dim} as one contiguous run",
                                key.1, key.0, fragments[position].tensor_id
                            ),
                        ));
                    }
                    placed.push((position, cursor));
                    cursor = cursor
                        .checked_add(fragments[position].nbytes)
                        .ok_or_else(|| {
                            invalid(entry, format!("buffer {} does not fit in 64 bits", key.1))
                        })?;
                }
            }
            out.insert(
                key,
                Buffer {
                    members: placed,
                    bytes: cursor,
                },
            );
        }
        Ok(out)
    }
}

/// A rank as an ordered key (dp, pp, tp, ep).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RankKey(pub u64, pub u64, pub u64, pub u64);

impl RankKey {
    /// The key of `rank`.
    pub fn of(rank: &ParallelRank) -> RankKey {
        RankKey(rank.dp, rank.pp, rank.tp, rank.ep)
    }
}

impl std::fmt::Display for RankKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "dp{}.pp{}.tp{}.ep{}", self.0, self.1, self.2, self.3)
    }
}

/// The fusion of the laid-out tensors by the compiled `entries`.
///
/// # Errors
///
/// `adapt_fused_invalid` at `/fused/{entry}`: a tensor two entries name, members of
/// different dtypes, or a `dim` not below a member's ndim. A buffer with members missing,
/// or on two stages, is refused rank by rank ([`Fusion::buffers`]).
pub fn fusion(entries: &[FusedRule], laid: &[TensorLayout<'_>]) -> Result<Fusion> {
    let mut members: BTreeMap<String, Member> = BTreeMap::new();
    let mut buffers: BTreeMap<(String, Option<u64>), Blocks> = BTreeMap::new();
    for (position, layout) in laid.iter().enumerate() {
        let name = &layout.tensor.name;
        for (entry, rule) in entries.iter().enumerate() {
            let Some((buffer, index, expert)) = rule.matches(name) else {
                continue;
            };
            if let Some(earlier) = members.get(name) {
                return Err(invalid(
                    entry,
                    format!(
                        "tensor {name} is a member of fused entries {} and {entry}",
                        earlier.entry
                    ),
                ));
            }
            if usize::try_from(rule.dim).map_or(true, |d| d >= layout.tensor.shape.len()) {
                return Err(invalid(
                    entry,
                    format!(
                        "tensor {name}: dim {} is out of range for shape {:?}",
                        rule.dim, layout.tensor.shape
                    ),
                ));
            }
            let block = if rule.stack { expert } else { None };
            buffers
                .entry((buffer.clone(), block))
                .or_default()
                .push((index, position));
            members.insert(
                name.clone(),
                Member {
                    buffer,
                    entry,
                    index,
                    expert: block,
                    dim: rule.dim,
                },
            );
        }
    }
    for ((buffer, _), mut held) in buffers {
        held.sort_unstable();
        let entry = members[&laid[held[0].1].tensor.name].entry;
        let first = &laid[held[0].1];
        for &(_, position) in &held[1..] {
            let other = &laid[position];
            if other.tensor.dtype != first.tensor.dtype {
                return Err(invalid(
                    entry,
                    format!(
                        "buffer {buffer}: members {} ({}) and {} ({}) differ in dtype",
                        first.tensor.name,
                        first.tensor.dtype,
                        other.tensor.name,
                        other.tensor.dtype
                    ),
                ));
            }
        }
    }
    Ok(Fusion {
        members,
        counts: entries.iter().map(|e| e.members.len()).collect(),
    })
}
