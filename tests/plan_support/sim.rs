//! The byte-level plan simulator: every source fragment's buffer is filled from a
//! function of (tensor, global coordinate, byte); the plan is executed region by region,
//! run by run; then every target byte must hold the value of its own coordinate and have
//! been written exactly once.

use std::collections::HashMap;

use weight_manifest::wire::{PlacementFragment, ReshardPlan};
use weight_manifest::Placement;

/// The byte `byte` of the element at `coordinate` of tensor `tensor`.
pub fn value(tensor: &str, coordinate: &[u64], byte: u64) -> u8 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64;
    let mut mix = |x: u64| {
        h ^= x;
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    for b in tensor.bytes() {
        mix(u64::from(b));
    }
    for &c in coordinate {
        mix(c.wrapping_add(0x9e37));
    }
    mix(byte);
    (h ^ (h >> 29) ^ (h >> 47)).to_le_bytes()[0]
}

/// Calls `visit` with every global coordinate of the box, in row-major order.
fn for_each_coordinate(offset: &[u64], extent: &[u64], visit: &mut dyn FnMut(&[u64])) {
    let count: u64 = extent.iter().product();
    let mut local = vec![0u64; extent.len()];
    let mut global = offset.to_vec();
    for _ in 0..count {
        visit(&global);
        for k in (0..extent.len()).rev() {
            local[k] += 1;
            if local[k] < extent[k] {
                global[k] = offset[k] + local[k];
                break;
            }
            local[k] = 0;
            global[k] = offset[k];
        }
    }
}

fn itemsize(placement: &Placement, tensor: &str) -> u64 {
    placement
        .tensors()
        .iter()
        .find(|t| t.tensor_id == tensor)
        .map(|t| t.itemsize)
        .unwrap()
}

/// The buffer a fragment holds: its box in row-major order.
pub fn fill(placement: &Placement, fragment: &PlacementFragment) -> Vec<u8> {
    let size = itemsize(placement, &fragment.tensor_id);
    let mut buffer = Vec::with_capacity(usize::try_from(fragment.nbytes).unwrap());
    for_each_coordinate(&fragment.global_offset, &fragment.local_shape, &mut |c| {
        for b in 0..size {
            buffer.push(value(&fragment.tensor_id, c, b));
        }
    });
    buffer
}

/// Executes `plan` from `source` into fresh target buffers and checks every byte of
/// every target fragment. Returns the number of bytes copied.
pub fn execute(plan: &ReshardPlan, source: &Placement, target: &Placement) -> Result<u64, String> {
    let sources: HashMap<&str, Vec<u8>> = source
        .fragments()
        .iter()
        .map(|f| (f.placement_fragment_id.as_str(), fill(source, f)))
        .collect();
    let mut targets: HashMap<&str, (Vec<u8>, Vec<u8>)> = target
        .fragments()
        .iter()
        .map(|f| {
            let n = usize::try_from(f.nbytes).unwrap();
            (
                f.placement_fragment_id.as_str(),
                (vec![0u8; n], vec![0u8; n]),
            )
        })
        .collect();
    let mut copied = 0u64;
    for (r, region) in plan.regions.iter().enumerate() {
        let from = sources
            .get(region.source_fragment_id.as_str())
            .ok_or(format!("region {r}: unknown source fragment"))?;
        let (to, writes) = targets
            .get_mut(region.target_fragment_id.as_str())
            .ok_or(format!("region {r}: unknown target fragment"))?;
        let counts: Vec<u64> = region.loops.iter().map(|l| l.count).collect();
        let segments: u64 = counts.iter().product();
        let mut index = vec![0u64; counts.len()];
        for _ in 0..segments {
            let mut s = region.source_offset;
            let mut t = region.target_offset;
            for (k, l) in region.loops.iter().enumerate() {
                s += index[k] * l.source_stride;
                t += index[k] * l.target_stride;
            }
            let size = |n: u64| usize::try_from(n).unwrap();
            let (s, t, n) = (size(s), size(t), size(region.run_bytes));
            if s + n > from.len() || t + n > to.len() {
                return Err(format!("region {r}: run out of bounds"));
            }
            to[t..t + n].copy_from_slice(&from[s..s + n]);
            for w in &mut writes[t..t + n] {
                *w = w.saturating_add(1);
            }
            copied += n as u64;
            for k in (0..counts.len()).rev() {
                index[k] += 1;
                if index[k] < counts[k] {
                    break;
                }
                index[k] = 0;
            }
        }
        if segments * region.run_bytes != region.nbytes {
            return Err(format!("region {r}: nbytes is not runs x run_bytes"));
        }
    }
    for fragment in target.fragments() {
        let (buffer, writes) = &targets[fragment.placement_fragment_id.as_str()];
        if buffer != &fill(target, fragment) {
            return Err(format!(
                "target {} holds wrong bytes",
                fragment.placement_fragment_id
            ));
        }
        if let Some(at) = writes.iter().position(|&w| w != 1) {
            return Err(format!(
                "target {} byte {at} written {} times",
                fragment.placement_fragment_id, writes[at]
            ));
        }
    }
    Ok(copied)
}
