//! fastppl core (design note to be written)
pub mod arpa;
pub mod compressed;
pub mod corpus;
pub mod counts;
pub mod error;
pub mod estimate;
pub mod model;
mod py;
pub mod score;
pub mod stream;
pub mod table;
pub mod vocab;
