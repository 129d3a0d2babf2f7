//! `cargo bench --bench pipeline`: the placement and runtime inventory pipelines on the
//! generated workloads (BENCHMARKS.md). Each group reports time per document and, through
//! the item counter, fragments per second; the `*_curve` groups run the same Kimi-K2-like
//! deployment at about 20k, 130k and 1M fragments, so a flat per-fragment rate shows
//! near-linear growth. SHA-256 over the same bytes is measured as the yardstick.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use divan::counter::{BytesCount, ItemsCount};
use divan::{black_box, Bencher};
use sha2::{Digest, Sha256};
use weight_manifest::inventory::validate_runtime_inventory;
use weight_manifest::{reader, Placement};
use weight_manifest::{Options, Runtime};
use weight_manifest_bench_data::{fragment_count, write_placement, write_runtime_inventory, Model};

fn main() {
    divan::main();
}

/// A generated document and its fragment count.
struct Workload {
    text: Vec<u8>,
    fragments: usize,
}

/// The generated documents, by kind and target size.
type Workloads = HashMap<(Kind, usize), Arc<Workload>>;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Placement,
    Inventory,
}

/// The Kimi-K2-like deployment (DP14) cut to about `target` fragments by its number of
/// layers (2, 8 or all 61: 19k, 126k, 1.06M fragments), so that the mix of tensors and
/// fragments per layer stays the same along the curve.
fn scaled(target: usize) -> Model {
    let layers = match target {
        0..=50_000 => 2,
        50_001..=500_000 => 8,
        _ => 61,
    };
    Model::kimi_k2(14).truncated(layers)
}

fn workload(kind: Kind, target: usize) -> Arc<Workload> {
    static CACHE: LazyLock<Mutex<Workloads>> = LazyLock::new(Mutex::default);
    let mut cache = CACHE.lock().expect("no panic while locked");
    Arc::clone(cache.entry((kind, target)).or_insert_with(|| {
        let model = if target == 0 {
            Model::deepseek_v3()
        } else {
            scaled(target)
        };
        let mut text = Vec::new();
        match kind {
            Kind::Placement => write_placement(&model, &mut text),
            Kind::Inventory => write_runtime_inventory(&model, &mut text),
        }
        .expect("in-memory write");
        let fragments = fragment_count(&model);
        Arc::new(Workload { text, fragments })
    }))
}

/// DeepSeek-V3-like placement: SHA-256 of the file's bytes (the yardstick).
#[divan::bench(sample_count = 10)]
fn deepseek_sha256_of_file(bencher: Bencher) {
    let w = workload(Kind::Placement, 0);
    bencher
        .counter(BytesCount::new(w.text.len()))
        .bench(|| Sha256::digest(black_box(&w.text)));
}

/// DeepSeek-V3-like placement: parse, validate, placement_id and digest.
#[divan::bench(sample_count = 10)]
fn deepseek_placement(bencher: Bencher) {
    let w = workload(Kind::Placement, 0);
    bencher
        .counter(ItemsCount::new(w.fragments))
        .bench(|| Placement::from_json(black_box(&w.text), &Options::default()).expect("valid"));
}

/// DeepSeek-V3-like placement: the general path's document tree alone, for comparison.
#[divan::bench(sample_count = 10)]
fn deepseek_document_tree(bencher: Bencher) {
    let w = workload(Kind::Placement, 0);
    bencher.counter(ItemsCount::new(w.fragments)).bench(|| {
        reader::read(
            black_box(&w.text),
            "placement manifest",
            &weight_manifest::Limits::default(),
        )
        .expect("valid")
    });
}

/// DeepSeek-V3-like runtime inventory: read, validate (fragment set, per-device overlap).
#[divan::bench(sample_count = 10)]
fn deepseek_runtime_inventory(bencher: Bencher) {
    let w = workload(Kind::Inventory, 0);
    bencher.counter(ItemsCount::new(w.fragments)).bench(|| {
        Runtime::from_inventory_json(black_box(&w.text), &Options::default()).expect("valid")
    });
}

/// DeepSeek-V3-like runtime inventory validated without building the manifest (what
/// `runtime validate --inventory` does).
#[divan::bench(sample_count = 10)]
fn deepseek_runtime_inventory_validate(bencher: Bencher) {
    let w = workload(Kind::Inventory, 0);
    bencher.counter(ItemsCount::new(w.fragments)).bench(|| {
        validate_runtime_inventory(black_box(&w.text), &Options::default()).expect("valid")
    });
}

/// Placement pipeline at about 20k, 130k and 1M fragments.
#[divan::bench(args = [20_000, 130_000, 1_000_000], sample_count = 3)]
fn placement_curve(bencher: Bencher, target: usize) {
    let w = workload(Kind::Placement, target);
    bencher
        .counter(ItemsCount::new(w.fragments))
        .bench(|| Placement::from_json(black_box(&w.text), &Options::default()).expect("valid"));
}

/// Runtime inventory pipeline at about 20k, 130k and 1M fragments.
#[divan::bench(args = [20_000, 130_000, 1_000_000], sample_count = 3)]
fn runtime_inventory_curve(bencher: Bencher, target: usize) {
    let w = workload(Kind::Inventory, target);
    bencher.counter(ItemsCount::new(w.fragments)).bench(|| {
        Runtime::from_inventory_json(black_box(&w.text), &Options::default()).expect("valid")
    });
}

/// Runtime inventory validation without the manifest at about 20k, 130k and 1M fragments.
#[divan::bench(args = [20_000, 130_000, 1_000_000], sample_count = 3)]
fn runtime_inventory_validate_curve(bencher: Bencher, target: usize) {
    let w = workload(Kind::Inventory, target);
    bencher.counter(ItemsCount::new(w.fragments)).bench(|| {
        validate_runtime_inventory(black_box(&w.text), &Options::default()).expect("valid")
    });
}
