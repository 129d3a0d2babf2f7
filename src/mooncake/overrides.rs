//! The overrides document of the export (`weight-manifest mooncake export --overrides`):
//! a JSON object with any of `weight_generation`, `placement_set_id`, `sizes`
//! (`{"tp":8,...}`), `participants` (Mooncake's `[{"participant_id","rank"}]`) and
//! `parallel_axes` (`{"tensor_id": [Mooncake axes]}`), read into [`ExportOptions`].

use crate::error::{Code, Error, Result};
use crate::limits::Limits;
use crate::path::Path;
use crate::reader;

use super::convert::ExportOptions;
use super::descriptor::read_axis;
use super::fields::{exact, int, member, object, seq, string};
use super::model::{AxisKind, Participant};
use super::read::read_rank;

fn unknown(key: &str, path: &Path<'_>) -> Error {
    Error::at(
        Code::MooncakeExportOverrideInvalid,
        format!("unknown override {key} (known: weight_generation, placement_set_id, sizes, participants, parallel_axes)"),
        path,
    )
}

impl ExportOptions {
    /// Reads an overrides document.
    ///
    /// # Errors
    ///
    /// The reader's codes; `mooncake_export_override_invalid` for an unknown member or
    /// axis name; the value checks' codes for a value of the wrong type.
    pub fn from_overrides_json(text: &[u8]) -> Result<ExportOptions> {
        let tree = reader::read(text, "mooncake export overrides", &Limits::default())?;
        let root = Path::Root;
        let obj = object(&tree, "mooncake export overrides", &root)?;
        let mut options = ExportOptions::default();
        for (key, value) in obj.iter() {
            let at = root.key(key);
            match key {
                "weight_generation" => options.weight_generation = Some(int(value, key, 0, &at)?),
                "placement_set_id" => options.placement_set_id = Some(string(value, key, &at)?),
                "sizes" => {
                    for (kind, size) in object(value, "sizes", &at)?.iter() {
                        let k =
                            AxisKind::parse(kind).ok_or_else(|| unknown(kind, &at.key(kind)))?;
                        options.sizes.insert(k, int(size, kind, 1, &at.key(kind))?);
                    }
                }
                "participants" => {
                    let mut list = Vec::new();
                    for (i, item) in seq(value, "participants", &at)?.iter().enumerate() {
                        let p = at.index(i);
                        let fields = exact(item, &["participant_id", "rank"], "participant", &p)?;
                        list.push(Participant {
                            participant_id: string(
                                member(fields, "participant_id"),
                                "participant_id",
                                &p.key("participant_id"),
                            )?,
                            rank: read_rank(
                                member(fields, "rank"),
                                "participant rank",
                                &p.key("rank"),
                            )?,
                        });
                    }
                    options.participants = Some(list);
                }
                "parallel_axes" => {
                    for (tensor, axes) in object(value, "parallel_axes", &at)?.iter() {
                        let t = at.key(tensor);
                        let items = seq(axes, "parallel_axes", &t)?;
                        let parsed = items
                            .iter()
                            .enumerate()
                            .map(|(i, a)| read_axis(a, i, &t.index(i)))
                            .collect::<Result<Vec<_>>>()?;
                        options.parallel_axes.insert(tensor.to_owned(), parsed);
                    }
                }
                other => return Err(unknown(other, &at)),
            }
        }
        Ok(options)
    }
}
