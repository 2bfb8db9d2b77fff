//! Findings, summaries and their rendering for people (tables) and scripts (JSON).

pub mod facts;
pub mod finding;
pub mod loss;
pub mod render;
pub mod sparkline;
pub mod summary;

pub use facts::Fact;
pub use finding::{Finding, Findings, Severity};
pub use loss::LossReport;
pub use summary::Summary;
