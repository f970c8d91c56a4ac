//! fastppl core (design note to be written)
pub mod corpus;
pub mod counts;
pub mod error;
mod py;
pub mod stream;
pub mod table;
pub mod vocab;
pub mod estimate;
pub mod model;
pub mod score;
