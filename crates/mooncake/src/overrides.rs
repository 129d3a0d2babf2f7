//! The overrides document of the export (`weight-manifest mooncake export --overrides`):
//! a JSON object with any of `weight_generation`, `placement_set_id`, `sizes`
//! (`{"tp":8,...}`), `participants` (Mooncake's `[{key::PARTICIPANT_ID,"rank"}]`) and
//! `parallel_axes` (`{"tensor_id": [Mooncake axes]}`), read into [`ExportOptions`].

use weight_manifest::document::{self, Document};
use weight_manifest::error::{Code, Error, Result};
use weight_manifest::path::Path;
use weight_manifest::value::Value;
use weight_manifest::Options;

use crate::convert::ExportOptions;
use crate::descriptor::read_axis;
use crate::fields::{exact, int, member, object, seq, string};
use crate::model::{AxisKind, Participant};
use crate::read::read_rank;
use crate::wire::key;
use crate::wire::MooncakeParticipant;

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
    pub fn from_overrides_json(text: &[u8], options: &Options<'_>) -> Result<ExportOptions> {
        document::read::<OverridesDocument>(text, options)
    }
}

/// An overrides document as a document kind of the core's reading pipeline.
struct OverridesDocument;

impl Document for OverridesDocument {
    type Output = ExportOptions;
    const LABEL: &'static str = "mooncake export overrides";

    fn from_tree(tree: &Value<'_>, _: &Options<'_>) -> Result<ExportOptions> {
        let root = Path::Root;
        let obj = object(tree, Self::LABEL, &root)?;
        let mut options = ExportOptions::default();
        for (name, value) in obj.iter() {
            let at = root.key(name);
            match name {
                key::WEIGHT_GENERATION => {
                    options.weight_generation = Some(int(value, name, 0, &at)?);
                }
                key::PLACEMENT_SET_ID => options.placement_set_id = Some(string(value, name, &at)?),
                "sizes" => {
                    for (kind, size) in object(value, "sizes", &at)?.iter() {
                        let k =
                            AxisKind::parse(kind).ok_or_else(|| unknown(kind, &at.key(kind)))?;
                        options.sizes.insert(k, int(size, kind, 1, &at.key(kind))?);
                    }
                }
                key::PARTICIPANTS => {
                    let mut list = Vec::new();
                    for (i, item) in seq(value, key::PARTICIPANTS, &at)?.iter().enumerate() {
                        let p = at.index(i);
                        let fields = exact(item, MooncakeParticipant::FIELDS, "participant", &p)?;
                        list.push(Participant {
                            participant_id: string(
                                member(fields, key::PARTICIPANT_ID),
                                key::PARTICIPANT_ID,
                                &p.key(key::PARTICIPANT_ID),
                            )?,
                            rank: read_rank(
                                member(fields, key::RANK),
                                "participant rank",
                                &p.key(key::RANK),
                            )?,
                        });
                    }
                    options.participants = Some(list);
                }
                key::PARALLEL_AXES => {
                    for (tensor, axes) in object(value, key::PARALLEL_AXES, &at)?.iter() {
                        let t = at.key(tensor);
                        let items = seq(axes, key::PARALLEL_AXES, &t)?;
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
