//! `weight-manifest content checkpoint`: the content manifest of a safetensors checkpoint
//! (contract §19.6). Each file is mapped read-only and each tensor hashed in place; with a
//! placement, each fragment's partial is computed from its box of the mapped tensor and
//! the partials must recombine to every tensor's digest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use weight_manifest::error::{Code, Error};
use weight_manifest::wire::{ContentFragment, ContentManifest, ContentTensor};
use weight_manifest::{Limits, Options, Placement};
use weight_manifest_adapt::{self as adapt, Checkpoint, HeaderTensor, ReadError};
use weight_manifest_content::manifest::{self, partial_to_wire, ALGORITHM};
use weight_manifest_content::partial::{digest, partial_in};
use weight_manifest_content::walk::Buffer;
use weight_manifest_content::{Tensor, DEFAULT_BLOCK_ELEMENTS};

use crate::input::{map_file, read_input, Input};
use crate::options::{Format, FormatArg, Out};
use crate::output::emit;
use crate::progress::{Progress, Unit};
use crate::render::{json_success, rejection};

#[derive(Args)]
pub(crate) struct CheckpointArgs {
    /// `model.safetensors`, `model.safetensors.index.json`, or a folder holding one.
    pub path: PathBuf,
    /// A placement of the checkpoint: also write each fragment's partial, and check that
    /// they recombine to every tensor's digest.
    #[arg(long, value_name = "P")]
    pub placement: Option<String>,
    /// The block size B in elements along the innermost dimension.
    #[arg(long, value_name = "B", default_value_t = DEFAULT_BLOCK_ELEMENTS, value_parser = clap::value_parser!(u64).range(1..))]
    pub block_elements: u64,
    /// The manifest's model_id (default: the placement's, else the checkpoint's name).
    #[arg(long)]
    pub model_id: Option<String>,
    /// The manifest's revision (default: the placement's, else `unspecified`).
    #[arg(long)]
    pub revision: Option<String>,
    /// The weight generation the digests describe.
    #[arg(long)]
    pub generation: Option<u64>,
    #[command(flatten)]
    pub out: Out,
    #[command(flatten)]
    pub format: FormatArg,
}

pub(crate) fn run(
    args: &CheckpointArgs,
    limits: &Limits,
    progress: &Progress,
) -> Result<ExitCode, String> {
    let format = args.format.format;
    let placement = match &args.placement {
        None => None,
        Some(path) => {
            const LABEL: &str = "placement manifest";
            let text = read_input(path, limits.max_document_bytes, progress, LABEL)?;
            match progress.reading(LABEL, text.len(), || {
                Placement::from_json(&text, &Options::default().with_limits(*limits))
            }) {
                Ok(p) => Some(p),
                Err(e) => return Ok(rejection(&e, format)),
            }
        }
    };
    let reading = format!("reading the checkpoint headers of {}", args.path.display());
    let checkpoint = match progress.phase(reading, || adapt::read_checkpoint(&args.path)) {
        Ok(checkpoint) => checkpoint,
        Err(ReadError::Invalid(e)) => return Ok(rejection(&e, format)),
        Err(io) => return Err(io.to_string()),
    };
    let files = map_files(&args.path, &checkpoint)?;
    let result = build(args, &checkpoint, &files, placement.as_ref(), progress);
    let manifest = match result {
        Ok(m) => m,
        Err(e) => return Ok(rejection(&e, format)),
    };
    let text = manifest::to_json(&manifest);
    let fragments = manifest.fragments.as_ref().map_or(0, Vec::len);
    if let Some(path) = args.out.output.as_deref() {
        emit(Some(path), text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if format == Format::Json {
        let mut fields = json!({ "tensors": manifest.tensors.len(), "fragments": fragments });
        if args.out.output.is_none() {
            fields["manifest"] = json!(text);
        }
        json_success(fields);
    } else if args.out.output.is_some() {
        eprintln!(
            "digested {} tensors and {fragments} fragments",
            manifest.tensors.len()
        );
    } else {
        emit(None, text.as_bytes()).map_err(|e| format!("cannot write output: {e}"))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Each file of the checkpoint, mapped, by the file name its tensors give.
fn map_files(path: &Path, checkpoint: &Checkpoint) -> Result<BTreeMap<String, Input>, String> {
    let folder: PathBuf = if path.is_dir() {
        path.to_owned()
    } else {
        path.parent().unwrap_or(Path::new(".")).to_owned()
    };
    let single = (!path.is_dir() && path.extension().is_none_or(|e| e != "json")).then_some(path);
    let mut files = BTreeMap::new();
    for tensor in checkpoint.tensors() {
        if files.contains_key(&tensor.file) {
            continue;
        }
        let file = single.map_or_else(|| folder.join(&tensor.file), Path::to_owned);
        let map = map_file(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        files.insert(tensor.file.clone(), map);
    }
    Ok(files)
}

fn invalid(message: String) -> Error {
    Error::new(Code::ContentManifestInvalid, message)
}

/// The bytes of `tensor` in its mapped file: after the 8-byte length and the header, at
/// the header's data offsets (`adapt_header_invalid` when the file ends before them).
fn tensor_bytes<'a>(
    files: &'a BTreeMap<String, Input>,
    tensor: &HeaderTensor,
) -> Result<&'a [u8], Error> {
    let short = || {
        Error::new(
            Code::AdaptHeaderInvalid,
            format!(
                "{}: the file ends before the data of tensor {}",
                tensor.file, tensor.name
            ),
        )
    };
    let bytes: &[u8] = files.get(&tensor.file).ok_or_else(short)?;
    let length: [u8; 8] = bytes
        .get(..8)
        .and_then(|p| p.try_into().ok())
        .ok_or_else(short)?;
    let data = u64::from_le_bytes(length)
        .checked_add(8)
        .ok_or_else(short)?;
    let (start, end) = tensor.data_offsets;
    let range = data
        .checked_add(start)
        .zip(data.checked_add(end))
        .and_then(|(s, e)| Some(usize::try_from(s).ok()?..usize::try_from(e).ok()?))
        .ok_or_else(short)?;
    bytes.get(range).ok_or_else(short)
}

fn build(
    args: &CheckpointArgs,
    checkpoint: &Checkpoint,
    files: &BTreeMap<String, Input>,
    placement: Option<&Placement>,
    progress: &Progress,
) -> Result<ContentManifest, Error> {
    let b = args.block_elements;
    let mut tensors = BTreeMap::new();
    for t in checkpoint.tensors() {
        let tensor = Tensor::new(&t.name, &t.shape, t.itemsize, b)?;
        tensors.insert(t.name.as_str(), (t, tensor, tensor_bytes(files, t)?));
    }
    let total: u64 = tensors
        .values()
        .map(|(_, _, bytes)| bytes.len() as u64)
        .sum();
    let mut wire = Vec::new();
    progress.counted("hashing tensors", Some(total), Unit::Bytes, |counter| {
        for (t, tensor, bytes) in tensors.values() {
            wire.push(ContentTensor {
                digest: digest(tensor, bytes)?.to_string(),
                dtype: t.dtype.to_owned(),
                global_shape: t.shape.clone(),
                itemsize: t.itemsize,
                tensor_id: t.name.clone(),
            });
            counter.add(bytes.len() as u64);
        }
        Ok::<(), Error>(())
    })?;
    let mut fragments = None;
    if let Some(p) = placement {
        check_placement_tensors(p, checkpoint)?;
        let mut out = Vec::with_capacity(p.fragments().len());
        let count = p.fragments().len() as u64;
        progress.counted(
            "hashing fragments",
            Some(count),
            Unit::Items("fragments"),
            |counter| {
                for f in p.fragments() {
                    let (_, tensor, bytes) =
                        tensors.get(f.tensor_id.as_str()).ok_or_else(|| {
                            invalid(format!(
                                "fragment {}: tensor {} is not in the checkpoint",
                                f.placement_fragment_id, f.tensor_id
                            ))
                        })?;
                    let buffer = Buffer {
                        bytes,
                        shape: tensor.shape(),
                        offset: &f.global_offset,
                    };
                    let partial = partial_in(tensor, &f.global_offset, &f.local_shape, buffer)?;
                    out.push(ContentFragment {
                        global_offset: f.global_offset.clone(),
                        local_shape: f.local_shape.clone(),
                        partial: partial_to_wire(&partial),
                        placement_fragment_id: f.placement_fragment_id.clone(),
                        rank: f.rank.clone(),
                        tensor_id: f.tensor_id.clone(),
                    });
                    counter.add(1);
                }
                Ok::<(), Error>(())
            },
        )?;
        out.sort_by(|x, y| x.placement_fragment_id.cmp(&y.placement_fragment_id));
        fragments = Some(out);
    }
    let name = args.path.file_name().map_or_else(
        || args.path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let manifest = ContentManifest {
        algorithm: ALGORITHM.to_owned(),
        block_elements: b,
        fragments,
        generation: args.generation,
        model_id: args
            .model_id
            .clone()
            .or_else(|| placement.map(|p| p.model_id().to_owned()))
            .unwrap_or(name),
        placement_digest: placement.map(|p| p.digest().to_owned()),
        revision: args
            .revision
            .clone()
            .or_else(|| placement.map(|p| p.revision().to_owned()))
            .unwrap_or_else(|| "unspecified".to_owned()),
        tensors: wire,
    };
    progress.phase("recombining the partials", || {
        manifest::verify_fragments(&manifest)
    })?;
    Ok(manifest)
}

/// The placement's tensors are the checkpoint's, with the same shapes and itemsizes.
fn check_placement_tensors(placement: &Placement, checkpoint: &Checkpoint) -> Result<(), Error> {
    let ours: BTreeMap<&str, &HeaderTensor> = checkpoint
        .tensors()
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    for d in placement.tensors() {
        let Some(t) = ours.get(d.tensor_id.as_str()) else {
            return Err(invalid(format!(
                "the placement's tensor {} is not in the checkpoint",
                d.tensor_id
            )));
        };
        if t.shape != d.global_shape || t.itemsize != d.itemsize {
            return Err(invalid(format!(
                "tensor {}: the placement has global_shape {:?} and itemsize {}, the checkpoint {:?} and {}",
                d.tensor_id, d.global_shape, d.itemsize, t.shape, t.itemsize
            )));
        }
    }
    if placement.tensors().len() != ours.len() {
        let missing = ours
            .keys()
            .find(|id| !placement.tensors().iter().any(|d| d.tensor_id == **id))
            .copied()
            .unwrap_or_default();
        return Err(invalid(format!(
            "the checkpoint's tensor {missing} is not in the placement"
        )));
    }
    Ok(())
}
