//! The frozen lookup structure of a model: an open-addressing table with linear probing whose
//! slots hold the key and its values inline, as KenLM's probing tables do, so that a lookup
//! usually costs one cache miss. Built once from the sharded tables used while counting; a
//! slot's position is the entry number of its n-gram.

use std::ops::{Deref, DerefMut};

use crate::ngram::keys::{home_slot, is_free, EMPTY, REMOVED};
use crate::util::huge_pages;
use crate::util::mapped::MappedSlice;
use crate::util::prefetch::prefetch_two_lines;

/// Slots per entry: KenLM's default probing multiplier.
const SPACE_MULTIPLIER: f64 = 1.5;

/// What a model stores for each n-gram (natural logs).
#[derive(Debug, Clone, Copy, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Entry {
    /// ln p(w | h).
    pub logp: f64,
    /// ln weight of the n-gram as a context (0 at the highest order).
    pub weight: f64,
}

#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub(crate) struct Slot {
    key: u64,
    entry: Entry,
}

/// A slot that holds no n-gram.
const EMPTY_SLOT: Slot = Slot {
    key: EMPTY,
    entry: Entry {
        logp: 0.0,
        weight: 0.0,
    },
};

/// `capacity` empty slots, in memory asked for as huge pages (tables are read at random).
fn empty_slots(capacity: usize) -> Vec<Slot> {
    let mut slots = huge_pages::vec_with_capacity(capacity);
    slots.resize(capacity, EMPTY_SLOT);
    slots
}

/// What [`ProbingTable::from_slots`] puts in a slot of the counting table it is built from.
pub enum Filled {
    /// Nothing: the slot was free.
    Free,
    /// No n-gram, but the slot stays taken ([`REMOVED`]): it held an n-gram that is left out (a
    /// pruned one), and the keys stored past it in its probe sequence must stay reachable.
    Removed,
    /// The slot's n-gram, by its key, and its values.
    Entry(u64, Entry),
}

/// A fixed-capacity probing hash table from packed n-gram keys to [`Entry`].
#[derive(Debug, Clone)]
pub struct ProbingTable {
    slots: SlotStorage,
    len: usize,
}

/// Where a table's slots live: its own vector, or a read-only view into a memory-mapped model
/// file (see [`crate::formats::binary`]); both read as `&[Slot]`. Writing to a mapped table first copies
/// it (copy on write), which only happens if a loaded model is grown.
#[derive(Debug, Clone)]
enum SlotStorage {
    Owned(Vec<Slot>),
    Mapped(MappedSlice<Slot>),
}

impl Deref for SlotStorage {
    type Target = [Slot];

    #[inline]
    fn deref(&self) -> &[Slot] {
        match self {
            SlotStorage::Owned(v) => v,
            SlotStorage::Mapped(m) => m.as_slice(),
        }
    }
}

impl DerefMut for SlotStorage {
    fn deref_mut(&mut self) -> &mut [Slot] {
        if let SlotStorage::Mapped(m) = self {
            *self = SlotStorage::Owned(m.as_slice().to_vec());
        }
        match self {
            SlotStorage::Owned(v) => v,
            SlotStorage::Mapped(_) => unreachable!("converted to owned above"),
        }
    }
}

impl ProbingTable {
    /// A table for `n` entries.
    pub fn with_entries(n: usize) -> Self {
        let capacity = ((n as f64 * SPACE_MULTIPLIER) as usize).max(n + 1);
        ProbingTable {
            slots: SlotStorage::Owned(empty_slots(capacity)),
            len: 0,
        }
    }

    /// A table whose slots are a view into a mapped model file, holding `len` entries. The caller
    /// ([`crate::formats::binary`]) has checked that the view is not empty, that `len` is below its
    /// length and that it is at most `u32::MAX` slots long, so that lookups terminate and slot
    /// numbers fit in a `u32`.
    pub(crate) fn from_mapped(slots: MappedSlice<Slot>, len: usize) -> Self {
        ProbingTable {
            slots: SlotStorage::Mapped(slots),
            len,
        }
    }

    /// The slots as bytes, in the host's byte order (for writing a model file).
    pub(crate) fn slot_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.slots)
    }

    /// Whether the slots are a view into a mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.slots, SlotStorage::Mapped(_))
    }

    /// The slot where the probe sequence of `key` starts: lookups in increasing order of it
    /// read the table front to back.
    #[inline]
    pub fn home_slot(&self, key: u64) -> usize {
        home_slot(key, self.slots.len())
    }

    /// A table of `capacity` slots filled by `slot -> Filled` in place: the slots of a counting
    /// table with the same capacity keep their positions (same home function), so entry numbers
    /// carry over and nothing is rehashed.
    pub fn from_slots(capacity: usize, fill: impl Fn(usize) -> Filled + Sync) -> Self {
        use rayon::prelude::*;
        let mut slots: Vec<Slot> = huge_pages::vec_with_capacity(capacity);
        slots.par_extend((0..capacity).into_par_iter().map(|i| match fill(i) {
            Filled::Entry(key, entry) => Slot { key, entry },
            Filled::Removed => Slot {
                key: REMOVED,
                ..EMPTY_SLOT
            },
            Filled::Free => EMPTY_SLOT,
        }));
        let len = slots.iter().filter(|s| !is_free(s.key)).count();
        ProbingTable {
            slots: SlotStorage::Owned(slots),
            len,
        }
    }

    /// Whether one more entry fits without overloading the probe sequences (load <= 0.9).
    pub fn has_room(&self) -> bool {
        self.has_room_for(1)
    }

    /// Whether `n` more entries fit without overloading the probe sequences (load <= 0.9).
    pub fn has_room_for(&self, n: usize) -> bool {
        self.len.saturating_add(n).saturating_mul(10) <= self.slots.len().saturating_mul(9)
    }

    /// Inserts a key that is not in the table yet; returns its slot.
    pub fn insert(&mut self, key: u64, entry: Entry) -> u32 {
        assert!(self.len < self.slots.len(), "probing table sized too small");
        debug_assert!(key != EMPTY);
        let mut i = self.home_slot(key);
        while self.slots[i].key != EMPTY {
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
        self.slots[i] = Slot { key, entry };
        self.len += 1;
        i as u32
    }

    /// Inserts `key` unless it is in the table already, in one probe sequence: its slot (the one
    /// [`ProbingTable::find`] then [`ProbingTable::insert`] would give), or `None` when the key
    /// was there (the table unchanged).
    pub fn insert_new(&mut self, key: u64, entry: Entry) -> Option<u32> {
        assert!(self.len < self.slots.len(), "probing table sized too small");
        debug_assert!(key != EMPTY);
        let mut i = self.home_slot(key);
        loop {
            let k = self.slots[i].key;
            if k == key {
                return None;
            }
            if k == EMPTY {
                break;
            }
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
        self.slots[i] = Slot { key, entry };
        self.len += 1;
        Some(i as u32)
    }

    /// The slot of `key`, if present. At most one probe per slot: a table with no empty slot
    /// (only a corrupt, unverified file can hold one) ends the search instead of looping.
    #[inline]
    pub fn find(&self, key: u64) -> Option<u32> {
        self.find_from(self.home_slot(key), key)
    }

    /// [`ProbingTable::find`] with the home slot of `key` known ([`ProbingTable::home_slot`]).
    #[inline]
    pub fn find_from(&self, home: usize, key: u64) -> Option<u32> {
        let mut i = home;
        for _ in 0..self.slots.len() {
            let k = self.slots[i].key;
            if k == key {
                return Some(i as u32);
            }
            if k == EMPTY {
                return None;
            }
            i += 1;
            if i == self.slots.len() {
                i = 0;
            }
        }
        None
    }

    /// Asks the CPU to start loading the probe of `key` (a hint, so that the load overlaps other
    /// work: interleaved scoring and the ARPA reader call it a few keys ahead).
    #[inline]
    pub fn prefetch(&self, key: u64) {
        self.prefetch_slot(self.home_slot(key));
    }

    /// Asks the CPU to start loading a probe from slot `slot` (below
    /// [`ProbingTable::capacity`]): its cache line and the next. Lookups in lmplz's Gutenberg
    /// 5-gram probe 1.4-2.0 slots of 24 bytes, which straddle two lines about half the time;
    /// prefetching the second line as well made scoring 26-37 % faster on an Intel Xeon host
    /// and cost nothing measurable on an AMD EPYC host (`benches/MEASUREMENTS.md`).
    #[inline]
    pub fn prefetch_slot(&self, slot: usize) {
        prefetch_two_lines(&self.slots[slot]);
    }

    /// The entry in slot `slot`.
    #[inline]
    pub fn entry(&self, slot: u32) -> &Entry {
        &self.slots[slot as usize].entry
    }

    /// The key in slot `slot` (an occupied slot).
    #[inline]
    pub fn key(&self, slot: u32) -> u64 {
        self.slots[slot as usize].key
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the table holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of slots (entry numbers range over `0..capacity()`).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Iterates `(slot, key, entry)` over the slots that hold an n-gram.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u64, &Entry)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !is_free(s.key))
            .map(|(i, s)| (i as u32, s.key, &s.entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ngram::keys::pack;

    #[test]
    fn insert_find_iterate() {
        let mut t = ProbingTable::with_entries(500);
        let mut slots = Vec::new();
        for i in 0..500u32 {
            let e = Entry {
                logp: -f64::from(i),
                weight: 0.5,
            };
            slots.push(t.insert(pack(i, i ^ 0x4d), e));
        }
        assert_eq!(t.len(), 500);
        for i in 0..500u32 {
            let s = t.find(pack(i, i ^ 0x4d)).unwrap();
            assert_eq!(s, slots[i as usize]);
            assert_eq!(t.entry(s).logp, -f64::from(i));
            assert_eq!(t.find(pack(i, i ^ 0x4e)), None);
        }
        assert_eq!(t.iter().count(), 500);
        assert!(t.capacity() >= 750);
    }

    #[test]
    fn insert_new_takes_the_slots_of_find_then_insert() {
        // keys crowded into few home slots, so that probe sequences are long and wrap around
        let keys: Vec<u64> = (0..900u32).map(|i| pack(i % 37, i / 37)).collect();
        let mut one = ProbingTable::with_entries(600);
        let mut two = ProbingTable::with_entries(600);
        for (n, &key) in keys.iter().chain(&keys).enumerate() {
            if !one.has_room() {
                break;
            }
            let e = Entry {
                logp: -(n as f64),
                weight: 0.0,
            };
            let expected = two.find(key).is_none().then(|| two.insert(key, e));
            assert_eq!(one.insert_new(key, e), expected, "key {n}");
        }
        assert_eq!(one.len(), two.len());
        assert_eq!(one.slot_bytes(), two.slot_bytes());
    }

    #[test]
    fn room_for_many_is_room_for_each() {
        let mut t = ProbingTable::with_entries(100);
        let mut k = 0;
        while t.has_room() {
            let free = (0..=t.capacity())
                .take_while(|&n| t.has_room_for(n))
                .last()
                .unwrap();
            assert!(free >= 1);
            t.insert(pack(k, 1), Entry::default());
            k += 1;
            assert!(t.has_room_for(free - 1) && !t.has_room_for(free));
        }
        assert!(!t.has_room_for(1) && t.has_room_for(0));
        assert!(!t.has_room_for(usize::MAX));
    }

    #[test]
    fn a_removed_slot_keeps_the_keys_past_it_reachable() {
        // a table two thirds full, where many keys lie past their home slot; every third key
        // removed, as pruning leaves them (with free slots instead, this fails)
        let mut counted = ProbingTable::with_entries(300);
        let keys: Vec<u64> = (0..300u32).map(|i| pack(i % 7, i)).collect();
        let slots: Vec<u32> = keys
            .iter()
            .map(|&k| counted.insert(k, Entry::default()))
            .collect();
        let removed = |i: usize| i % 3 == 0;
        let table = ProbingTable::from_slots(counted.capacity(), |slot| {
            match slots.iter().position(|&s| s as usize == slot) {
                None => Filled::Free,
                Some(i) if removed(i) => Filled::Removed,
                Some(i) => Filled::Entry(keys[i], Entry::default()),
            }
        });
        for (i, &key) in keys.iter().enumerate() {
            let expected = (!removed(i)).then_some(slots[i]);
            assert_eq!(table.find(key), expected, "key {i}");
        }
        assert_eq!(table.len(), 200);
        assert_eq!(table.iter().count(), 200);
        assert!(table.iter().all(|(_, key, _)| !is_free(key)));
    }

    #[test]
    fn a_table_for_zero_entries_answers_none() {
        let t = ProbingTable::with_entries(0);
        assert_eq!(t.find(pack(1, 2)), None);
        assert!(t.is_empty());
    }
}
