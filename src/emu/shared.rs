//! One block's shared memory, with the bookkeeping for the learner-facing checks: which words
//! were ever written (uninitialised reads), and who last wrote and read each word since the
//! last barrier (races). Also counts requests and bank conflicts.

use crate::backend::FindingKind;

/// Reader slot value meaning "more than one thread read this word in this epoch".
const MANY: u32 = u32::MAX;

/// A hazard seen on one access, reported by the block runner with thread coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hazard {
    pub kind: FindingKind,
    pub byte: u64,
    /// The other thread and instruction involved (for races).
    pub other_thread: Option<u32>,
    pub other_pc: Option<u32>,
}

/// What the checks remember of one 4-byte word. One record per word, so an access touches
/// one cache line of bookkeeping rather than six arrays.
#[derive(Debug, Clone, Copy, Default)]
struct Shadow {
    /// Epoch of the last write (0 = never written), its thread and pc.
    write_epoch: u32,
    write_thread: u32,
    write_pc: u32,
    /// Epoch of the last read, its thread (or MANY) and pc.
    read_epoch: u32,
    read_thread: u32,
    read_pc: u32,
}

pub struct SharedMemory {
    /// Contents as 4-byte words (accesses are naturally aligned, so none straddles a word
    /// except 8-byte ones, which take two).
    words: Vec<u32>,
    shadow: Vec<Shadow>,
    /// Barrier epoch: starts at 1 and grows by one at every barrier.
    pub epoch: u32,
    pub check_hazards: bool,
}

impl SharedMemory {
    pub fn new(bytes: usize, check_hazards: bool) -> SharedMemory {
        let words = bytes.div_ceil(4);
        SharedMemory {
            words: vec![0; words],
            shadow: vec![Shadow::default(); words],
            epoch: 1,
            check_hazards,
        }
    }

    /// Fresh state for the next block: contents are left as they are (shared memory is not
    /// cleared between blocks on a GPU either) but nothing counts as written.
    pub fn reset(&mut self) {
        for w in &mut self.shadow {
            w.write_epoch = 0;
            w.read_epoch = 0;
        }
        self.epoch = 1;
    }

    pub fn size(&self) -> u64 {
        self.words.len() as u64 * 4
    }

    /// Reads `bytes` (1, 2, 4 or 8) at a naturally aligned `offset` inside the memory.
    #[inline]
    pub fn load(&self, offset: u64, bytes: u32) -> u64 {
        let w = (offset / 4) as usize;
        match bytes {
            4 => self.words[w] as u64,
            8 => self.words[w] as u64 | (self.words[w + 1] as u64) << 32,
            _ => (self.words[w] as u64 >> ((offset % 4) * 8)) & super::alu::mask(bytes as u8 * 8),
        }
    }

    #[inline]
    pub fn store(&mut self, offset: u64, bytes: u32, value: u64) {
        let w = (offset / 4) as usize;
        match bytes {
            4 => self.words[w] = value as u32,
            8 => {
                self.words[w] = value as u32;
                self.words[w + 1] = (value >> 32) as u32;
            }
            _ => {
                let shift = (offset % 4) * 8;
                let m = (super::alu::mask(bytes as u8 * 8) as u32) << shift;
                self.words[w] = (self.words[w] & !m) | (((value as u32) << shift) & m);
            }
        }
    }

    /// Stores like `store`, and says whether the bits there were these already, which
    /// `note_write` needs (asked only when hazards are checked: false otherwise).
    #[inline]
    pub fn store_unchanged(&mut self, offset: u64, bytes: u32, value: u64) -> bool {
        let unchanged = self.check_hazards && self.load(offset, bytes) == value & super::alu::mask(bytes as u8 * 8);
        self.store(offset, bytes, value);
        unchanged
    }

    /// Records a read by `thread` at `pc`; returns a hazard if the read is suspect.
    #[inline(always)]
    pub fn note_read(&mut self, offset: u64, bytes: u32, thread: u32, pc: u32) -> Option<Hazard> {
        if !self.check_hazards {
            return None;
        }
        let epoch = self.epoch;
        let mut hazard = None;
        for word in (offset / 4) as usize..(offset + bytes as u64).div_ceil(4) as usize {
            let w = &mut self.shadow[word];
            if w.write_epoch == 0 {
                hazard.get_or_insert(Hazard {
                    kind: FindingKind::UninitialisedSharedRead,
                    byte: word as u64 * 4,
                    other_thread: None,
                    other_pc: None,
                });
            } else if w.write_epoch == epoch && w.write_thread != thread {
                hazard.get_or_insert(Hazard {
                    kind: FindingKind::SharedRace,
                    byte: word as u64 * 4,
                    other_thread: Some(w.write_thread),
                    other_pc: Some(w.write_pc),
                });
            }
            if w.read_epoch == epoch {
                if w.read_thread != thread {
                    w.read_thread = MANY;
                }
            } else {
                w.read_epoch = epoch;
                w.read_thread = thread;
            }
            w.read_pc = pc;
        }
        hazard
    }

    /// Records a write by `thread` at `pc`; returns a hazard if another thread touched the
    /// word since the last barrier. `unchanged`: the write stored the bits already there.
    /// Two threads writing the same value to a word (a halo corner zeroed by several
    /// threads) leave the same memory whichever goes last, so that alone is no race: the
    /// H200 passes such kernels (the corpus, 2026-12-04), and a failing verdict here would
    /// contradict it. A read by another thread in between is still one.
    #[inline(always)]
    pub fn note_write(&mut self, offset: u64, bytes: u32, thread: u32, pc: u32, unchanged: bool) -> Option<Hazard> {
        let epoch = self.epoch;
        let check = self.check_hazards;
        let mut hazard = None;
        for word in (offset / 4) as usize..(offset + bytes as u64).div_ceil(4) as usize {
            let w = &mut self.shadow[word];
            if check {
                let same_epoch_write = w.write_epoch == epoch && w.write_thread != thread && !unchanged;
                let same_epoch_read = w.read_epoch == epoch && w.read_thread != thread;
                if same_epoch_write || same_epoch_read {
                    let (other_thread, other_pc) = if same_epoch_write {
                        (w.write_thread, w.write_pc)
                    } else {
                        (w.read_thread, w.read_pc)
                    };
                    hazard.get_or_insert(Hazard {
                        kind: FindingKind::SharedRace,
                        byte: word as u64 * 4,
                        other_thread: (other_thread != MANY).then_some(other_thread),
                        other_pc: Some(other_pc),
                    });
                }
            }
            w.write_epoch = epoch;
            w.write_thread = thread;
            w.write_pc = pc;
        }
        hazard
    }
}

impl SharedMemory {
    /// Records an atomic read-modify-write by `thread`: atomics do not race with each other,
    /// but one on a word nobody initialised is reported, and the word counts as written (by
    /// "many threads", so a plain read by another thread before the next barrier is a race).
    #[inline]
    pub fn note_atomic(&mut self, offset: u64, bytes: u32, pc: u32) -> Option<Hazard> {
        let mut hazard = None;
        for word in (offset / 4) as usize..(offset + bytes as u64).div_ceil(4) as usize {
            let w = &mut self.shadow[word];
            if self.check_hazards && w.write_epoch == 0 {
                hazard.get_or_insert(Hazard {
                    kind: FindingKind::UninitialisedSharedRead,
                    byte: word as u64 * 4,
                    other_thread: None,
                    other_pc: None,
                });
            }
            w.write_epoch = self.epoch;
            w.write_thread = MANY;
            w.write_pc = pc;
        }
        hazard
    }
}

/// Extra shared-memory wavefronts of one warp access: the most distinct 4-byte words any
/// of the 32 banks must serve, minus one. Lanes reading the same word are a broadcast.
pub fn bank_conflicts(offsets: &[(u64, u32)]) -> u64 {
    // The usual cases cost nothing to recognise: consecutive 4-byte words (a tile row) or one
    // word for everybody (a broadcast) never conflict.
    if offsets.iter().all(|&(_, b)| b == 4) {
        let first = offsets[0].0;
        let consecutive = offsets.windows(2).all(|w| w[1].0 == w[0].0 + 4) && offsets.len() <= 32;
        if consecutive || offsets.iter().all(|&(o, _)| o == first) {
            return 0;
        }
    }
    let mut per_bank: [[u64; 8]; 32] = [[u64::MAX; 8]; 32];
    let mut counts = [0usize; 32];
    let mut worst = 0usize;
    for &(offset, bytes) in offsets {
        for word in offset / 4..(offset + bytes as u64).div_ceil(4) {
            let bank = (word % 32) as usize;
            let seen = &mut per_bank[bank];
            if seen[..counts[bank].min(8)].contains(&word) {
                continue;
            }
            if counts[bank] < 8 {
                seen[counts[bank]] = word;
            }
            counts[bank] += 1;
            worst = worst.max(counts[bank]);
        }
    }
    // Accesses wider than 4 bytes are served in several phases; each phase serves 128 bytes.
    let total_bytes: u64 = offsets.iter().map(|&(_, b)| b as u64).sum();
    let phases = total_bytes.div_ceil(128).max(1) as usize;
    worst.saturating_sub(phases) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_count_distinct_words_per_bank() {
        let row: Vec<(u64, u32)> = (0..32).map(|l| (l * 4, 4)).collect();
        assert_eq!(bank_conflicts(&row), 0);
        let broadcast: Vec<(u64, u32)> = (0..32).map(|_| (64, 4)).collect();
        assert_eq!(bank_conflicts(&broadcast), 0);
        let column: Vec<(u64, u32)> = (0..32).map(|l| (l * 128, 4)).collect(); // stride 32 words
        assert_eq!(bank_conflicts(&column), 31);
        let stride2: Vec<(u64, u32)> = (0..32).map(|l| (l * 8, 4)).collect();
        assert_eq!(bank_conflicts(&stride2), 1);
    }

    #[test]
    fn races_and_uninitialised_reads() {
        let mut s = SharedMemory::new(64, true);
        assert_eq!(
            s.note_read(0, 4, 1, 10).unwrap().kind,
            FindingKind::UninitialisedSharedRead
        );
        assert!(s.note_write(8, 4, 1, 11, false).is_none());
        assert!(s.note_read(8, 4, 1, 12).is_none()); // same thread
        let race = s.note_read(8, 4, 2, 13).unwrap(); // another thread, no barrier
        assert_eq!(
            (race.kind, race.other_thread, race.other_pc),
            (FindingKind::SharedRace, Some(1), Some(11))
        );
        s.epoch += 1; // barrier
        assert!(s.note_read(8, 4, 3, 14).is_none());
        let war = s.note_write(8, 4, 4, 15, false).unwrap(); // write after thread 3's read
        assert_eq!(war.other_thread, Some(3));
    }

    #[test]
    fn two_threads_writing_the_same_value_is_no_race_but_a_different_value_is() {
        let mut s = SharedMemory::new(64, true);
        assert!(s.note_write(4, 4, 1, 20, false).is_none());
        assert!(s.note_write(4, 4, 2, 20, true).is_none()); // same bits: no hazard
        let waw = s.note_write(4, 4, 3, 21, false).unwrap(); // new bits, same interval
        assert_eq!((waw.kind, waw.other_thread), (FindingKind::SharedRace, Some(2)));
        // A read by another thread before the barrier is still a race.
        assert!(s.note_read(4, 4, 5, 22).is_some());
    }
}
