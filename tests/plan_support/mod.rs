//! Shared support of the planner and coverage tests: a placement builder, random
//! scenarios, the byte-level plan simulator, the DeepSeek-V3-like reshard workload and the
//! element-by-element oracle.

pub mod brute;
pub mod build;
pub mod deepseek;
pub mod scenario;
pub mod sim;
