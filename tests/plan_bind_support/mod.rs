//! Support of the plan-binding tests: runtime bindings for test placements, and the
//! physical simulator.

pub mod bindings;
pub mod phys;
