//! Hash index from packed n-gram keys to dense entry numbers, sharded for parallel building.
//!
//! An n-gram of order m >= 2 is keyed by `(entry number of its (m-1)-token prefix, last word)`
//! packed into a `u64`, so a key is 8 bytes whatever the order and no n-gram ever needs a heap
//! allocation (KenLM's probing tables hash whole n-grams; chaining through the prefix gives the
//! same lookups one order at a time, which is what scoring does anyway). Unigrams need no table:
//! their entry number is the word id.
//!
//! Entries live in `S` shards (a power of two); a key's shard comes from bits of its hash that
//! hashbrown does not use, so each shard can be filled by its own thread with no locking. The
//! global entry number is `local << shift | shard`.

use hashbrown::HashTable;

/// Marks "no entry" in arrays of entry numbers.
pub const NONE: u32 = u32::MAX;

/// Packs a prefix entry number and a word id into a key.
#[inline]
pub fn pack(prefix: u32, word: u32) -> u64 {
    (u64::from(prefix) << 32) | u64::from(word)
}

/// The prefix entry number of a key.
#[inline]
pub fn key_prefix(key: u64) -> u32 {
    (key >> 32) as u32
}

/// The last word of a key.
#[inline]
pub fn key_word(key: u64) -> u32 {
    key as u32
}

/// A 64-bit mix (MurmurHash3's finaliser): every key bit affects every hash bit.
#[inline]
pub fn hash_key(key: u64) -> u64 {
    let mut h = key;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// One shard: keys in insertion order and a hash index over them.
#[derive(Debug, Default, Clone)]
pub struct Shard {
    index: HashTable<u32>,
    keys: Vec<u64>,
}

impl Shard {
    /// The local number of `key`, if present.
    #[inline]
    pub fn find(&self, key: u64, hash: u64) -> Option<u32> {
        self.index
            .find(hash, |&e| self.keys[e as usize] == key)
            .copied()
    }

    /// The local number of `key`, inserting it if absent; the flag says whether it was new.
    #[inline]
    pub fn find_or_insert(&mut self, key: u64, hash: u64) -> (u32, bool) {
        let keys = &self.keys;
        match self.index.entry(
            hash,
            |&e| keys[e as usize] == key,
            |&e| hash_key(keys[e as usize]),
        ) {
            hashbrown::hash_table::Entry::Occupied(o) => (*o.get(), false),
            hashbrown::hash_table::Entry::Vacant(v) => {
                let local = u32::try_from(keys.len()).expect("more than 2^32 n-grams in a shard");
                v.insert(local);
                self.keys.push(key);
                (local, true)
            }
        }
    }

    /// Keys in local-number order.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when the shard holds no entry.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.keys.shrink_to_fit();
        let keys = &self.keys;
        self.index.shrink_to_fit(|&e| hash_key(keys[e as usize]));
    }

    /// Bytes held (keys plus index buckets), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.index.capacity() * (4 + 1)
    }
}

/// The shards of one order.
#[derive(Debug, Clone)]
pub struct ShardedIndex {
    shards: Vec<Shard>,
    shift: u32,
}

impl ShardedIndex {
    /// An empty index with `2^shift` shards.
    pub fn new(shift: u32) -> Self {
        ShardedIndex {
            shards: (0..1usize << shift).map(|_| Shard::default()).collect(),
            shift,
        }
    }

    /// The shard a hash belongs to.
    #[inline]
    pub fn shard_of(&self, hash: u64) -> usize {
        ((hash >> 32) as usize) & ((1usize << self.shift) - 1)
    }

    /// The global entry number of `(prefix, word)`, if present.
    #[inline]
    pub fn find(&self, prefix: u32, word: u32) -> Option<u32> {
        let key = pack(prefix, word);
        let hash = hash_key(key);
        let shard = self.shard_of(hash);
        self.shards[shard]
            .find(key, hash)
            .map(|local| self.global(shard, local))
    }

    /// Global number from a shard and a local number.
    #[inline]
    pub fn global(&self, shard: usize, local: u32) -> u32 {
        (local << self.shift) | shard as u32
    }

    /// Shard and local number of a global number.
    #[inline]
    pub fn split(&self, global: u32) -> (usize, usize) {
        (
            (global & ((1 << self.shift) - 1)) as usize,
            (global >> self.shift) as usize,
        )
    }

    /// log2 of the number of shards.
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// The shards.
    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// The shards, mutably (each can be filled by its own thread).
    pub fn shards_mut(&mut self) -> &mut [Shard] {
        &mut self.shards
    }

    /// Number of entries over all shards.
    pub fn len(&self) -> usize {
        self.shards.iter().map(Shard::len).sum()
    }

    /// True when no shard holds an entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates `(global number, key)` over all entries.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.shards.iter().enumerate().flat_map(move |(s, shard)| {
            shard
                .keys()
                .iter()
                .enumerate()
                .map(move |(l, &k)| (self.global(s, l as u32), k))
        })
    }
}

/// Per-entry values of one order, laid out like the shards of its [`ShardedIndex`].
#[derive(Debug, Clone, Default)]
pub struct ShardedValues<T> {
    shards: Vec<Vec<T>>,
    shift: u32,
}

impl<T: Copy> ShardedValues<T> {
    /// One value per entry of `index`, all `fill`.
    pub fn like(index: &ShardedIndex, fill: T) -> Self {
        ShardedValues {
            shards: index.shards().iter().map(|s| vec![fill; s.len()]).collect(),
            shift: index.shift(),
        }
    }

    /// Wraps per-shard vectors.
    pub fn from_shards(shards: Vec<Vec<T>>, shift: u32) -> Self {
        ShardedValues { shards, shift }
    }

    /// Dense values (a single shard): for unigrams, indexed by word id.
    pub fn dense(values: Vec<T>) -> Self {
        ShardedValues {
            shards: vec![values],
            shift: 0,
        }
    }

    #[inline]
    fn split(&self, global: u32) -> (usize, usize) {
        (
            (global & ((1 << self.shift) - 1)) as usize,
            (global >> self.shift) as usize,
        )
    }

    /// The value of global entry `g`.
    #[inline]
    pub fn get(&self, g: u32) -> T {
        let (s, l) = self.split(g);
        self.shards[s][l]
    }

    /// Mutable access to the value of global entry `g`.
    #[inline]
    pub fn get_mut(&mut self, g: u32) -> &mut T {
        let (s, l) = self.split(g);
        &mut self.shards[s][l]
    }

    /// A new set of values, `f` of each of these.
    pub fn map<U>(&self, f: impl Fn(&T) -> U) -> ShardedValues<U> {
        ShardedValues {
            shards: self
                .shards
                .iter()
                .map(|v| v.iter().map(&f).collect())
                .collect(),
            shift: self.shift,
        }
    }

    /// The per-shard vectors, taken out.
    pub fn into_shards(self) -> Vec<Vec<T>> {
        self.shards
    }

    /// The per-shard vectors.
    pub fn shards(&self) -> &[Vec<T>] {
        &self.shards
    }

    /// The per-shard vectors, mutably.
    pub fn shards_mut(&mut self) -> &mut [Vec<T>] {
        &mut self.shards
    }

    /// Iterates `(global number, value)`.
    pub fn iter(&self) -> impl Iterator<Item = (u32, T)> + '_ {
        self.shards.iter().enumerate().flat_map(move |(s, v)| {
            v.iter()
                .enumerate()
                .map(move |(l, &x)| (((l as u32) << self.shift) | s as u32, x))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_and_find_across_shards() {
        let mut idx = ShardedIndex::new(1);
        let mut numbers = Vec::new();
        for p in 0..1000u32 {
            let key = pack(p, p * 7 + 1);
            let h = hash_key(key);
            let s = idx.shard_of(h);
            let (local, new) = idx.shards_mut()[s].find_or_insert(key, h);
            assert!(new);
            assert_eq!(idx.shards_mut()[s].find_or_insert(key, h), (local, false));
            numbers.push(idx.global(s, local));
        }
        assert_eq!(idx.len(), 1000);
        for p in 0..1000u32 {
            assert_eq!(idx.find(p, p * 7 + 1), Some(numbers[p as usize]));
            assert_eq!(idx.find(p, p * 7 + 2), None);
        }
        let mut vals = ShardedValues::like(&idx, 0u32);
        for (g, key) in idx.iter() {
            *vals.get_mut(g) = key_prefix(key);
        }
        for p in 0..1000u32 {
            assert_eq!(vals.get(numbers[p as usize]), p);
        }
        assert_eq!(key_word(pack(3, 9)), 9);
    }
}
