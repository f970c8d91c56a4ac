//! fastppl core (design note to be written)
mod py;
