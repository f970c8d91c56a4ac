//! fastppl core (design note to be written)
pub mod metrics;
mod py;
