//! The numbers behind a rejection ([`Detail`]): what a rule compared, so a person can act
//! on it and a program can read it. Rendered once here, as a JSON object
//! ([`Detail::to_json`]) and as one readable line ([`Detail::summary`]); the CLI, the
//! Python binding and the C ABI show these renderings.

use std::fmt;

/// A position in a document's text: where the strict reader (contract §4) found that the
/// text is not JSON. Carried by every `invalid_json` rejection of the reader (see
/// [`Error::json_location`](crate::Error::json_location)); the message itself stays the contract's.
///
/// The position is the first offending byte:
/// - for text that is not UTF-8, the first byte of the first ill-formed UTF-8 sequence
///   (what Python's `UnicodeDecodeError.start` reports);
/// - otherwise the first byte that no valid JSON text could have there: the text before
///   it is the beginning of some JSON document, and with this byte it is not (an escaped
///   lone surrogate counts as invalid from the first hex digit that makes it one). When
///   the whole text is such a beginning (it ends early, or is empty), the position is the
///   end of the text: `offset` is its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JsonLocation {
    /// The byte offset of the position from the start of the text, 0-based.
    pub offset: u64,
    /// The line, 1-based: the number of line feeds (`\n`, U+000A) before the position,
    /// plus one. A carriage return does not end a line (as in Python's `json` and
    /// serde_json), so CRLF text counts lines correctly.
    pub line: u64,
    /// The column, 1-based, counted in characters (Unicode scalar values, not bytes or
    /// UTF-16 units): the number of characters between the start of the line and the
    /// position, plus one. A multi-byte UTF-8 character counts once (and the bytes of a
    /// cut-off one before the position count as one character).
    pub column: u64,
}

impl JsonLocation {
    /// The location of byte `offset` (at most `text.len()`) in `text`. Counts the lines
    /// from the start of the text, so it is for the cold path of a rejection only.
    #[cold]
    pub(crate) fn in_text(text: &[u8], offset: usize) -> JsonLocation {
        let before = text.get(..offset).unwrap_or(text);
        let (mut lines, mut line_start) = (0usize, 0usize);
        for (i, &b) in before.iter().enumerate() {
            if b == b'\n' {
                lines += 1;
                line_start = i + 1;
            }
        }
        // Every byte that does not continue a UTF-8 sequence starts a character.
        let characters = before
            .get(line_start..)
            .unwrap_or_default()
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        let wide = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        JsonLocation {
            offset: wide(before.len()),
            line: wide(lines).saturating_add(1),
            column: wide(characters).saturating_add(1),
        }
    }
}

impl fmt::Display for JsonLocation {
    /// Renders `line 3 column 17 (byte 52)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} column {} (byte {})",
            self.line, self.column, self.offset
        )
    }
}

/// The values behind a rejection. Pointers in a detail are RFC 6901 pointers into the same
/// input document as the error's own [`path`](crate::Error::path).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detail {
    /// `address_overlap`: the two runtime fragment_ids and their address space.
    AddressOverlap {
        /// The fragment named first.
        first: String,
        /// The fragment named second.
        second: String,
        /// The manifest's instance_id.
        instance_id: String,
        /// The shared worker_id.
        worker_id: String,
        /// The shared device.
        device: String,
        /// Where the fragment named first is (the error's path is the second's).
        other: Option<String>,
    },
    /// `invalid_json`: where in the text the document stops being JSON.
    JsonLocation(JsonLocation),
    /// `fields_mismatch`: how the object's keys differ from the contract's, and, for a
    /// whole document, the document kind its keys are instead (wrong command).
    FieldsMismatch {
        /// The keys the contract requires that the object lacks, sorted.
        missing: Vec<String>,
        /// The object's keys the contract does not allow there, sorted.
        unexpected: Vec<String>,
        /// The document kind the keys match, if another.
        looks_like: Option<DocumentKind>,
    },
    /// A value that differs from the one the rule derives (`nbytes_mismatch`,
    /// `placement_id_mismatch`, `generation_mismatch`, `inconsistent_lease_generations`).
    Mismatch {
        /// What the rule derives, as JSON text (a number may exceed 2^64 − 1).
        expected: String,
        /// What the document says, as JSON text.
        got: String,
        /// Where the value the rule derived `expected` from is, when it is another value
        /// of the document (the first fragment's lease generation).
        other: Option<String>,
    },
    /// `below_minimum`: the least value allowed and the integer given.
    BelowMinimum {
        /// The minimum.
        minimum: u64,
        /// The integer as written (it may be negative), as JSON text.
        got: String,
    },
    /// A second element with the identity of an earlier one (`duplicate_tensor_id`,
    /// `duplicate_fragment_id`, `duplicate_logical_fragment`, ...): the error's path is
    /// the element found second, `other` the first.
    Duplicate {
        /// The identity they share (an id, or the tensor, rank and box).
        key: String,
        /// Where the first one is.
        other: Option<String>,
    },
    /// `fragment_rank_mismatch`: the tensor's rank and the box's lengths.
    RankMismatch {
        /// len(global_shape).
        ndim: u64,
        /// len(global_offset).
        offset_len: u64,
        /// len(local_shape).
        shape_len: u64,
    },
    /// The box on one axis (`fragment_out_of_bounds`, `replicated_fragment_offset`,
    /// `replicated_fragment_incomplete`, `non_shard_axis_offset`, `non_shard_axis_shape`).
    BoxAxis {
        /// The axis.
        axis: u64,
        /// global_offset on it.
        offset: u64,
        /// local_shape on it.
        extent: u64,
        /// global_shape on it.
        size: u64,
    },
    /// `fragment_overlap`: the two boxes and the region both cover.
    Overlap {
        /// Where the other fragment is.
        other: Option<String>,
        /// The box of the fragment the error points at, then the other's: (offset, shape).
        boxes: [(Vec<u64>, Vec<u64>); 2],
        /// The first corner of the common region.
        offset: Vec<u64>,
        /// The common region's extent on each axis.
        shape: Vec<u64>,
    },
}

/// A document kind of the contract, and the command that reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DocumentKind {
    /// Its name, e.g. "runtime inventory".
    pub name: &'static str,
    /// The CLI command that reads it, e.g. "runtime validate --inventory".
    pub command: &'static str,
}

impl Detail {
    /// The detail as a compact JSON object, keys sorted. (An `invalid_json` location renders
    /// as its line, column and offset; the CLI and the bindings show it as the error's
    /// location instead, not as a detail.)
    ///
    /// ```
    /// use weight_manifest::Detail;
    ///
    /// let detail = Detail::BoxAxis { axis: 0, offset: 6, extent: 4, size: 8 };
    /// assert_eq!(detail.to_json(), r#"{"axis":0,"extent":4,"offset":6,"size":8}"#);
    /// ```
    pub fn to_json(&self) -> String {
        object(self.members())
    }

    /// The detail as one line for people, e.g. `axis 0: offset 6, extent 4, size 8`.
    ///
    /// ```
    /// use weight_manifest::Detail;
    ///
    /// let detail = Detail::BoxAxis { axis: 0, offset: 6, extent: 4, size: 8 };
    /// assert_eq!(detail.summary(), "axis 0: offset 6, extent 4, size 8");
    /// ```
    pub fn summary(&self) -> String {
        let other = |other: &Option<String>| match other {
            Some(at) => format!("; the other is at {}", shown(at)),
            None => String::new(),
        };
        match self {
            Detail::AddressOverlap {
                first,
                second,
                other: at,
                ..
            } => format!(
                "{second} overlaps {first} in one address space{}",
                other(at)
            ),
            Detail::JsonLocation(at) => at.to_string(),
            Detail::FieldsMismatch {
                missing,
                unexpected,
                looks_like,
            } => {
                let mut parts = Vec::new();
                if !missing.is_empty() {
                    parts.push(format!("missing: {}", missing.join(", ")));
                }
                if !unexpected.is_empty() {
                    parts.push(format!("unexpected: {}", unexpected.join(", ")));
                }
                if let Some(kind) = looks_like {
                    parts.push(format!(
                        "these are the keys of a {}: read it with `weight-manifest {}`",
                        kind.name, kind.command
                    ));
                }
                parts.join("; ")
            }
            Detail::Mismatch {
                expected,
                got,
                other: at,
            } => format!("expected {expected}, got {got}{}", other(at)),
            Detail::BelowMinimum { minimum, got } => format!("at least {minimum}, got {got}"),
            Detail::Duplicate { key, other: at } => format!("{key} appears twice{}", other(at)),
            Detail::RankMismatch {
                ndim,
                offset_len,
                shape_len,
            } => format!(
                "the tensor has {ndim} axes; global_offset has {offset_len}, local_shape {shape_len}"
            ),
            Detail::BoxAxis {
                axis,
                offset,
                extent,
                size,
            } => format!("axis {axis}: offset {offset}, extent {extent}, size {size}"),
            Detail::Overlap {
                other: at,
                boxes: [(a_offset, a_shape), (b_offset, b_shape)],
                offset,
                shape,
            } => format!(
                "box offset {a_offset:?} shape {a_shape:?} and box offset {b_offset:?} shape {b_shape:?} both cover offset {offset:?} shape {shape:?}{}",
                other(at)
            ),
        }
    }

    /// The members as (key, JSON text) pairs.
    fn members(&self) -> Vec<(&'static str, String)> {
        match self {
            Detail::AddressOverlap {
                first,
                second,
                instance_id,
                worker_id,
                device,
                other,
            } => vec![
                ("first", text(first)),
                ("second", text(second)),
                ("instance_id", text(instance_id)),
                ("worker_id", text(worker_id)),
                ("device", text(device)),
                ("other", opt_text(other.as_deref())),
            ],
            Detail::JsonLocation(at) => vec![
                ("line", at.line.to_string()),
                ("column", at.column.to_string()),
                ("offset", at.offset.to_string()),
            ],
            Detail::FieldsMismatch {
                missing,
                unexpected,
                looks_like,
            } => vec![
                ("missing", texts(missing)),
                ("unexpected", texts(unexpected)),
                (
                    "looks_like",
                    looks_like.map_or_else(
                        || "null".to_owned(),
                        |kind| {
                            object(vec![
                                (
                                    "command",
                                    text(&format!("weight-manifest {}", kind.command)),
                                ),
                                ("kind", text(kind.name)),
                            ])
                        },
                    ),
                ),
            ],
            Detail::Mismatch {
                expected,
                got,
                other,
            } => vec![
                ("expected", expected.clone()),
                ("got", got.clone()),
                ("other", opt_text(other.as_deref())),
            ],
            Detail::BelowMinimum { minimum, got } => {
                vec![("minimum", minimum.to_string()), ("got", got.clone())]
            }
            Detail::Duplicate { key, other } => {
                vec![("key", text(key)), ("other", opt_text(other.as_deref()))]
            }
            Detail::RankMismatch {
                ndim,
                offset_len,
                shape_len,
            } => vec![
                ("ndim", ndim.to_string()),
                ("offset_len", offset_len.to_string()),
                ("shape_len", shape_len.to_string()),
            ],
            Detail::BoxAxis {
                axis,
                offset,
                extent,
                size,
            } => vec![
                ("axis", axis.to_string()),
                ("offset", offset.to_string()),
                ("extent", extent.to_string()),
                ("size", size.to_string()),
            ],
            Detail::Overlap {
                other,
                boxes,
                offset,
                shape,
            } => vec![
                ("other", opt_text(other.as_deref())),
                (
                    "boxes",
                    format!(
                        "[{}]",
                        boxes
                            .iter()
                            .map(|(o, s)| object(vec![
                                ("offset", numbers(o)),
                                ("shape", numbers(s))
                            ]))
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                ),
                ("offset", numbers(offset)),
                ("shape", numbers(shape)),
            ],
        }
    }

    /// Sets the detail's `other` pointer, for the details that have one.
    pub(crate) fn set_other(&mut self, pointer: Option<String>) {
        match self {
            Detail::AddressOverlap { other, .. }
            | Detail::Mismatch { other, .. }
            | Detail::Duplicate { other, .. }
            | Detail::Overlap { other, .. } => *other = pointer,
            _ => {}
        }
    }
}

/// A pointer as text output shows it: the root as `/`.
pub(crate) fn shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "/"
    } else {
        pointer
    }
}

/// A JSON object of (key, JSON text) members, keys sorted.
fn object(mut members: Vec<(&'static str, String)>) -> String {
    members.sort_unstable_by_key(|m| m.0);
    let body: Vec<String> = members
        .iter()
        .map(|(key, value)| format!("{}:{value}", text(key)))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A JSON string, in the canonical encoding (§5).
pub(crate) fn text(value: &str) -> String {
    crate::canonical::to_string(value).unwrap_or_else(|e| unreachable!("a str encodes: {e}"))
}

/// A JSON string, or null.
fn opt_text(value: Option<&str>) -> String {
    value.map_or_else(|| "null".to_owned(), text)
}

/// A JSON array of strings.
fn texts(values: &[String]) -> String {
    let items: Vec<String> = values.iter().map(|v| text(v)).collect();
    format!("[{}]", items.join(","))
}

/// A JSON array of numbers.
fn numbers(values: &[u64]) -> String {
    let items: Vec<String> = values.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(","))
}
