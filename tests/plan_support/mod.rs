//! Shared support of the planner and coverage tests: a placement builder, random
//! scenarios, the byte-level plan simulator and the DeepSeek-V3-like reshard workload.

pub mod build;
pub mod deepseek;
pub mod scenario;
pub mod sim;
