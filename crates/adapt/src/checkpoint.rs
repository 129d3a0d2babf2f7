//! The checkpoint's files, read header-only.
//!
//! A checkpoint is one `model.safetensors`, or a sharded checkpoint described by
//! `model.safetensors.index.json` (`{"weight_map": {"tensor": "shard.safetensors", ...}}`,
//! shards next to the index). Of each safetensors file only the 8-byte length and the
//! header are read; the tensor data is never touched.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::header::{header_limits, parse_header, HeaderTensor};
use crate::errors::error_at;
use weight_manifest::error::{Code, Error, Result};
use weight_manifest::value::Value;

/// The largest header the safetensors format allows (its reader's limit).
pub const MAX_HEADER_BYTES: u64 = 100_000_000;
/// The largest index file read.
pub const MAX_INDEX_BYTES: u64 = 256 << 20;
/// The file name of a single-file checkpoint.
pub const SINGLE_FILE: &str = "model.safetensors";
/// The file name of a sharded checkpoint's index.
pub const INDEX_FILE: &str = "model.safetensors.index.json";

/// The tensors of a checkpoint, sorted by name (names are distinct).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    tensors: Vec<HeaderTensor>,
}

impl Checkpoint {
    /// A checkpoint of one file whose header JSON is `text` (the bytes after the 8-byte
    /// length); `source` names the file in messages.
    pub fn from_header(text: &[u8], source: &str) -> Result<Checkpoint> {
        Ok(Checkpoint::from_tensors(parse_header(text, source)?))
    }

    /// A checkpoint of one whole safetensors file held in memory (`bytes`: the 8-byte
    /// little-endian header length, the header JSON, the data); `source` names the file in
    /// messages. The data section is not read.
    pub fn from_file_bytes(bytes: &[u8], source: &str) -> Result<Checkpoint> {
        let size = bytes.len() as u64;
        let prefix: [u8; 8] = bytes
            .get(..8)
            .and_then(|p| p.try_into().ok())
            .ok_or_else(|| short_file(source, size))?;
        let n = header_length(source, prefix, size)?;
        // header_length bounds n by size - 8, so the range is inside `bytes`.
        let end = usize::try_from(8 + n).map_err(|_| short_file(source, size))?;
        Checkpoint::from_header(&bytes[8..end], source)
    }

    fn from_tensors(mut tensors: Vec<HeaderTensor>) -> Checkpoint {
        tensors.sort_by(|a, b| a.name.cmp(&b.name));
        Checkpoint { tensors }
    }

    /// The tensors, sorted by name.
    pub fn tensors(&self) -> &[HeaderTensor] {
        &self.tensors
    }
}

/// Why a checkpoint could not be read: the file system, or invalid content.
#[derive(Debug)]
pub enum ReadError {
    /// A file could not be opened or read.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        error: io::Error,
    },
    /// The content is invalid: `adapt_header_invalid`.
    Invalid(Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            ReadError::Invalid(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<Error> for ReadError {
    fn from(error: Error) -> Self {
        ReadError::Invalid(error)
    }
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> ReadError + '_ {
    move |error| ReadError::Io {
        path: path.to_owned(),
        error,
    }
}

fn invalid(message: String) -> ReadError {
    ReadError::Invalid(Error::new(Code::AdaptHeaderInvalid, message))
}

/// Reads a checkpoint: `path` is a safetensors file, an index file (a name ending in
/// `.json`), or a folder holding `model.safetensors.index.json` or `model.safetensors`.
pub fn read_checkpoint(path: &Path) -> Result<Checkpoint, ReadError> {
    if path.is_dir() {
        let index = path.join(INDEX_FILE);
        if index.is_file() {
            return read_index(&index);
        }
        let single = path.join(SINGLE_FILE);
        if single.is_file() {
            return read_single(&single);
        }
        return Err(ReadError::Io {
            path: path.to_owned(),
            error: io::Error::new(
                io::ErrorKind::NotFound,
                format!("the folder holds neither {INDEX_FILE} nor {SINGLE_FILE}"),
            ),
        });
    }
    if path.extension().is_some_and(|e| e == "json") {
        read_index(path)
    } else {
        read_single(path)
    }
}

fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn read_single(path: &Path) -> Result<Checkpoint, ReadError> {
    let text = read_header_bytes(path)?;
    Ok(Checkpoint::from_header(&text, &display_name(path))?)
}

/// Reads the header JSON of the safetensors file at `path`: the 8-byte little-endian
/// length, then exactly that many bytes. The data section is not read.
pub fn read_header_bytes(path: &Path) -> Result<Vec<u8>, ReadError> {
    let name = display_name(path);
    let mut file = File::open(path).map_err(io_error(path))?;
    let size = file.metadata().map_err(io_error(path))?.len();
    let mut length = [0_u8; 8];
    if size < 8 {
        return Err(ReadError::Invalid(short_file(&name, size)));
    }
    file.read_exact(&mut length).map_err(io_error(path))?;
    let n = header_length(&name, length, size)?;
    let mut text = Vec::new();
    file.take(n)
        .read_to_end(&mut text)
        .map_err(io_error(path))?;
    if text.len() as u64 != n {
        return Err(invalid(format!("{name}: the header ends early")));
    }
    Ok(text)
}

/// A file of `size` bytes, too short for the 8-byte header length.
fn short_file(name: &str, size: u64) -> Error {
    Error::new(
        Code::AdaptHeaderInvalid,
        format!("{name}: the file has {size} bytes, fewer than the 8-byte header length"),
    )
}

/// The header length a file of `size` (at least 8) bytes declares in `prefix`: at most
/// the safetensors limit, and inside the file.
fn header_length(name: &str, prefix: [u8; 8], size: u64) -> Result<u64> {
    let n = u64::from_le_bytes(prefix);
    if n > MAX_HEADER_BYTES {
        return Err(Error::new(
            Code::AdaptHeaderInvalid,
            format!(
                "{name}: header length {n} is above the safetensors limit of {MAX_HEADER_BYTES} bytes"
            ),
        ));
    }
    if n > size.saturating_sub(8) {
        return Err(Error::new(
            Code::AdaptHeaderInvalid,
            format!("{name}: header length {n} runs past the end of the file ({size} bytes)"),
        ));
    }
    Ok(n)
}

/// A shard file name from the index: a plain file name next to the index.
fn shard_name_ok(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}

fn read_index(path: &Path) -> Result<Checkpoint, ReadError> {
    let name = display_name(path);
    let file = File::open(path).map_err(io_error(path))?;
    let mut text = Vec::new();
    file.take(MAX_INDEX_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(io_error(path))?;
    if text.len() as u64 > MAX_INDEX_BYTES {
        return Err(invalid(format!(
            "{name}: the index is larger than {MAX_INDEX_BYTES} bytes"
        )));
    }
    let shards = parse_index(&text, &name)?;
    let folder = path.parent().unwrap_or(Path::new("."));
    let mut tensors = Vec::new();
    for (shard, expected) in &shards {
        let shard_path = folder.join(shard);
        let header = read_header_bytes(&shard_path)?;
        let found = parse_header(&header, shard)?;
        for tensor in &found {
            if !expected.contains(&tensor.name) {
                return Err(invalid(format!(
                    "{shard}: tensor {} is not mapped to this shard by {name}",
                    tensor.name
                )));
            }
        }
        if found.len() != expected.len() {
            let missing = expected
                .iter()
                .find(|t| !found.iter().any(|f| &f.name == *t))
                .cloned()
                .unwrap_or_default();
            return Err(invalid(format!(
                "{name}: weight_map maps tensor {missing} to {shard}, which does not hold it"
            )));
        }
        tensors.extend(found);
    }
    Ok(Checkpoint::from_tensors(tensors))
}

/// The shards of an index and the tensor names each must hold, by shard file name.
fn parse_index(text: &[u8], name: &str) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let document = weight_manifest::reader::read(text, "safetensors index", &header_limits())
        .map_err(|e| Error::new(Code::AdaptHeaderInvalid, format!("{name}: {}", e.message())))?;
    let Some(root) = document.as_object() else {
        return Err(error_at(
            Code::AdaptHeaderInvalid,
            format!("{name}: the index must be a JSON object"),
            "",
        ));
    };
    let Some(Value::Object(map)) = root.get("weight_map") else {
        return Err(error_at(
            Code::AdaptHeaderInvalid,
            format!("{name}: weight_map must be an object of tensor name to shard file"),
            "/weight_map",
        ));
    };
    let mut shards: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (tensor, shard) in map.iter() {
        match shard {
            Value::Str(shard) if shard_name_ok(shard) => {
                shards
                    .entry(shard.to_string())
                    .or_default()
                    .insert(tensor.to_owned());
            }
            _ => {
                let root = weight_manifest::path::Path::Root;
                let member = root.key("weight_map");
                return Err(error_at(
                    Code::AdaptHeaderInvalid,
                    format!(
                        "{name}: the shard of tensor {tensor} must be a file name next to the index"
                    ),
                    member.key(tensor).to_pointer(),
                ));
            }
        }
    }
    Ok(shards)
}
