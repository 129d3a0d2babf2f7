//! The physical simulator: fake device memory per (instance, worker, device), each
//! allocation a byte buffer at a base address. Every source fragment's bytes (a
//! function of global coordinates, as in the planner's simulator) are placed at its
//! binding address; the bound copy list is executed address by address; then every
//! target fragment's bytes, read back at its binding address, must be its own
//! coordinates' values, each written exactly once.

use std::collections::{BTreeMap, HashMap};

use weight_manifest::wire::{BoundCopy, BoundLocation};
use weight_manifest::{Binding, BoundPlan, Placement};

use crate::plan_support::sim::fill;

/// One allocation: its bytes and how often each was written.
type Allocation = (Vec<u8>, Vec<u8>);

/// One device's memory: allocations by base address.
#[derive(Default)]
struct Device {
    allocations: BTreeMap<u64, Allocation>,
}

impl Device {
    /// The allocation holding [address, address + n) and the offset in it.
    fn find(&mut self, address: u64, n: u64) -> Result<(&mut Allocation, usize), String> {
        let (base, allocation) = self
            .allocations
            .range_mut(..=address)
            .next_back()
            .ok_or(format!("address {address:#x} is not allocated"))?;
        let offset = address - base;
        if offset + n > allocation.0.len() as u64 {
            return Err(format!(
                "[{address:#x}, +{n}) leaves the allocation at {base:#x}"
            ));
        }
        Ok((allocation, usize::try_from(offset).unwrap()))
    }
}

type Key = (String, String, String);

/// The memory of every device of every instance.
#[derive(Default)]
pub struct Memory {
    devices: HashMap<Key, Device>,
}

impl Memory {
    fn device(&mut self, instance: &str, at: &BoundLocation) -> Result<&mut Device, String> {
        let key = (instance.to_owned(), at.worker_id.clone(), at.device.clone());
        self.devices
            .get_mut(&key)
            .ok_or(format!("no memory on {key:?}"))
    }

    /// Allocates each fragment of `binding` at its address, holding `bytes(fragment)`.
    pub fn place(&mut self, binding: &Binding, bytes: &mut dyn FnMut(&str) -> Vec<u8>) {
        let instance = &binding.as_wire().instance_id;
        for f in binding.fragments() {
            let key = (instance.clone(), f.worker_id.clone(), f.device.clone());
            let data = bytes(&f.placement_fragment_id);
            assert_eq!(data.len() as u64, f.nbytes);
            let writes = vec![0u8; data.len()];
            let previous = self
                .devices
                .entry(key)
                .or_default()
                .allocations
                .insert(f.address, (data, writes));
            assert!(previous.is_none(), "two fragments at one address");
        }
    }

    /// Copies one run of `n` bytes.
    fn copy_run(
        &mut self,
        (source_instance, from, s): (&str, &BoundLocation, u64),
        (target_instance, to, t): (&str, &BoundLocation, u64),
        n: u64,
    ) -> Result<(), String> {
        let run: Vec<u8> = {
            let (allocation, at) = self.device(source_instance, from)?.find(s, n)?;
            allocation.0[at..at + usize::try_from(n).unwrap()].to_vec()
        };
        let (allocation, at) = self.device(target_instance, to)?.find(t, n)?;
        let end = at + run.len();
        allocation.0[at..end].copy_from_slice(&run);
        for w in &mut allocation.1[at..end] {
            *w = w.saturating_add(1);
        }
        Ok(())
    }

    /// The bytes and write counts of the allocation at `address`.
    fn allocation(&self, key: &Key, address: u64) -> Option<&Allocation> {
        self.devices.get(key)?.allocations.get(&address)
    }
}

/// Executes one copy: loops outermost first, one run of run_bytes per iteration.
fn execute_copy(memory: &mut Memory, bound: &BoundPlan, copy: &BoundCopy) -> Result<u64, String> {
    let wire = bound.as_wire();
    let counts: Vec<u64> = copy.loops.iter().map(|l| l.count).collect();
    let runs: u64 = counts.iter().product();
    let mut index = vec![0u64; counts.len()];
    for _ in 0..runs {
        let (mut s, mut t) = (copy.source.address, copy.target.address);
        for (k, l) in copy.loops.iter().enumerate() {
            s += index[k] * l.source_stride;
            t += index[k] * l.target_stride;
        }
        memory.copy_run(
            (&wire.source.instance_id, &copy.source, s),
            (&wire.target.instance_id, &copy.target, t),
            copy.run_bytes,
        )?;
        for k in (0..counts.len()).rev() {
            index[k] += 1;
            if index[k] < counts[k] {
                break;
            }
            index[k] = 0;
        }
    }
    Ok(runs * copy.run_bytes)
}

/// Places the source placement's bytes at the source binding's addresses and zeroed
/// target buffers at the target binding's, runs every copy of `bound` pair by pair,
/// and checks every target byte. Returns the bytes copied.
pub fn run(
    bound: &BoundPlan,
    (source, source_binding): (&Placement, &Binding),
    (target, target_binding): (&Placement, &Binding),
) -> Result<u64, String> {
    let mut memory = Memory::default();
    let by_id = |p: &Placement, id: &str| {
        p.fragments()
            .iter()
            .find(|f| f.placement_fragment_id == id)
            .cloned()
            .unwrap()
    };
    memory.place(source_binding, &mut |id| fill(source, &by_id(source, id)));
    memory.place(target_binding, &mut |id| {
        vec![0u8; usize::try_from(by_id(target, id).nbytes).unwrap()]
    });
    let mut copied = 0u64;
    let mut previous: Option<(&str, &str)> = None;
    for pair in bound.pairs() {
        let key = (
            pair.source_worker_id.as_str(),
            pair.target_worker_id.as_str(),
        );
        if previous.is_some_and(|p| p >= key) {
            return Err(format!("pairs out of order at {key:?}"));
        }
        previous = Some(key);
        let mut bytes = 0u64;
        for copy in &pair.copies {
            if (
                copy.source.worker_id.as_str(),
                copy.target.worker_id.as_str(),
            ) != key
            {
                return Err(format!("a copy of pair {key:?} is on other workers"));
            }
            let n = execute_copy(&mut memory, bound, copy)?;
            if n != copy.nbytes {
                return Err(format!("copy moves {n} bytes, nbytes {}", copy.nbytes));
            }
            bytes += n;
        }
        if bytes != pair.bytes {
            return Err(format!(
                "pair {key:?} moves {bytes} bytes, says {}",
                pair.bytes
            ));
        }
        copied += bytes;
    }
    let instance = &target_binding.as_wire().instance_id;
    for f in target_binding.fragments() {
        let key = (instance.clone(), f.worker_id.clone(), f.device.clone());
        let (bytes, writes) = memory
            .allocation(&key, f.address)
            .ok_or("lost allocation")?;
        let fragment = by_id(target, &f.placement_fragment_id);
        if bytes != &fill(target, &fragment) {
            return Err(format!(
                "target {} holds wrong bytes",
                f.placement_fragment_id
            ));
        }
        if let Some(at) = writes.iter().position(|&w| w != 1) {
            return Err(format!(
                "target {} byte {at} written {} times",
                f.placement_fragment_id, writes[at]
            ));
        }
    }
    Ok(copied)
}
