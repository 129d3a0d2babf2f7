//! What an operation gives back: its result fields ([`OpResult`]) or a request that cannot
//! be run ([`RequestError`]); the leaf the operation modules share.

use std::fmt;

use weight_manifest::{Binding, Placement, Runtime};

/// The result fields of a successful operation; which are set depends on the operation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpResult {
    /// Placement wire JSON (placement-producing operations).
    pub canonical: Option<String>,
    /// The placement_id (placement-producing operations).
    pub placement_id: Option<String>,
    /// The digest (placement-producing operations).
    pub digest: Option<String>,
    /// Runtime manifest JSON (runtime-producing operations).
    pub runtime: Option<String>,
    /// The runtime manifest's generation (runtime-producing operations; may be unset).
    pub generation: Option<Option<u64>>,
    /// Binding manifest JSON (binding-producing operations).
    pub binding: Option<String>,
    /// Coverage report JSON (`coverage`).
    pub report: Option<String>,
    /// Reshard plan JSON (`plan`).
    pub plan: Option<String>,
    /// The plan_id (`plan`).
    pub plan_id: Option<String>,
    /// Bound plan JSON (`plan.bind`).
    pub bound_plan: Option<String>,
    /// The bound_plan_id (`plan.bind`).
    pub bound_plan_id: Option<String>,
    /// A fragment partial's canonical JSON (`content.partial`).
    pub partial: Option<String>,
    /// Block values' canonical JSON (`content.block_values`).
    pub values: Option<String>,
    /// A content manifest's canonical JSON (`content.manifest`).
    pub content_manifest: Option<String>,
    /// A Mooncake placement's topology_id (`mooncake.validate`).
    pub topology_id: Option<String>,
    /// A Mooncake Store manifest's text as upstream writes it (`mooncake.storage`).
    pub mooncake_text: Option<String>,
    /// A transfer plan in Mooncake's region form, canonical JSON (`mooncake.plan`).
    pub mooncake_plan: Option<String>,
}

impl OpResult {
    pub(crate) fn placement(p: &Placement) -> Self {
        OpResult {
            canonical: Some(p.to_json()),
            placement_id: Some(p.placement_id().to_owned()),
            digest: Some(p.digest().to_owned()),
            ..OpResult::default()
        }
    }

    pub(crate) fn runtime(r: &Runtime) -> Self {
        OpResult {
            runtime: Some(r.to_json()),
            generation: Some(r.generation()),
            ..OpResult::default()
        }
    }

    pub(crate) fn binding(b: &Binding) -> Self {
        OpResult {
            binding: Some(b.to_json()),
            ..OpResult::default()
        }
    }

    /// The fields as a JSON object (`generation` is present, possibly `null`, for runtime
    /// results).
    pub fn to_json_value(&self) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        let strings = [
            ("binding", &self.binding),
            ("bound_plan", &self.bound_plan),
            ("bound_plan_id", &self.bound_plan_id),
            ("canonical", &self.canonical),
            ("content_manifest", &self.content_manifest),
            ("digest", &self.digest),
            ("mooncake_plan", &self.mooncake_plan),
            ("mooncake_text", &self.mooncake_text),
            ("placement_id", &self.placement_id),
            ("plan", &self.plan),
            ("partial", &self.partial),
            ("plan_id", &self.plan_id),
            ("report", &self.report),
            ("runtime", &self.runtime),
            ("topology_id", &self.topology_id),
            ("values", &self.values),
        ];
        for (key, value) in strings {
            if let Some(value) = value {
                map.insert(key.to_owned(), serde_json::Value::String(value.clone()));
            }
        }
        if let Some(generation) = self.generation {
            map.insert(
                "generation".to_owned(),
                generation.map_or(serde_json::Value::Null, Into::into),
            );
        }
        serde_json::Value::Object(map)
    }
}

/// A request that cannot be run: an input member the operation needs is absent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestError(pub String);

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RequestError {}

pub(crate) fn need<'i>(value: Option<&'i String>, name: &str) -> Result<&'i [u8], RequestError> {
    value
        .map(String::as_bytes)
        .ok_or_else(|| RequestError(format!("input member `{name}` is required")))
}
