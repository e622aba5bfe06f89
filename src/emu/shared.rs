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

/// What the checks remember of the 4-byte words, one array per field (structure of arrays):
/// a warp's row access reads and writes 32 consecutive entries of each, which the compiler
/// turns into vector instructions ([`SharedMemory::load_row`], [`SharedMemory::store_row`]).
#[derive(Default, Clone)]
struct Shadow {
    /// Epoch of the last write (0 = never written), its thread and pc.
    write_epoch: Vec<u32>,
    write_thread: Vec<u32>,
    write_pc: Vec<u32>,
    /// Epoch of the last read, its thread (or MANY) and pc.
    read_epoch: Vec<u32>,
    read_thread: Vec<u32>,
    read_pc: Vec<u32>,
}

/// The lanes of a row access: lane `l` of `mask` touches word `first_word + l`. Lanes
/// outside `mask` touch nothing (their word may lie outside the memory, in the padding).
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub first_word: isize,
    pub mask: u32,
}

/// Unused words before and after the memory in every array: the 32 words of any row whose
/// active lanes lie in the memory are then all in the arrays, so a row's loops run over
/// exactly 32 lanes, which the compiler turns into a few vector instructions.
const PAD: usize = 32;

impl Row {
    /// The array index of lane 0's word.
    #[inline(always)]
    fn slot(self) -> usize {
        (self.first_word + PAD as isize) as usize
    }

    /// All ones for a lane that takes part, zero for one that does not: the lanes' updates
    /// are blends (`new & on | old & !on`), which vectorise where branches would not.
    #[inline(always)]
    fn on(self) -> [u32; 32] {
        std::array::from_fn(|l| ((self.mask >> l) & 1).wrapping_neg())
    }
}

/// `new` where `on` is all ones, `old` where it is zero.
#[inline(always)]
fn blend(on: u32, new: u32, old: u32) -> u32 {
    (new & on) | (old & !on)
}

/// The 32 entries of `v` from `at`.
#[inline(always)]
fn lanes32(v: &[u32], at: usize) -> &[u32; 32] {
    v[at..at + 32].try_into().expect("32 lanes")
}

#[inline(always)]
fn lanes32_mut(v: &mut [u32], at: usize) -> &mut [u32; 32] {
    (&mut v[at..at + 32]).try_into().expect("32 lanes")
}

#[derive(Clone)]
pub struct SharedMemory {
    /// Contents as 4-byte words (accesses are naturally aligned, so none straddles a word
    /// except 8-byte ones, which take two).
    words: Vec<u32>,
    shadow: Shadow,
    /// Barrier epoch: starts at 1 and grows by one at every barrier.
    pub epoch: u32,
    pub check_hazards: bool,
}

impl SharedMemory {
    pub fn new(bytes: usize, check_hazards: bool) -> SharedMemory {
        let words = bytes.div_ceil(4) + 2 * PAD;
        SharedMemory {
            words: vec![0; words],
            shadow: Shadow {
                write_epoch: vec![0; words],
                write_thread: vec![0; words],
                write_pc: vec![0; words],
                read_epoch: vec![0; words],
                read_thread: vec![0; words],
                read_pc: vec![0; words],
            },
            epoch: 1,
            check_hazards,
        }
    }

    /// Fresh state for the next block: contents are left as they are (shared memory is not
    /// cleared between blocks on a GPU either) but nothing counts as written.
    pub fn reset(&mut self) {
        self.shadow.write_epoch.fill(0);
        self.shadow.read_epoch.fill(0);
        self.epoch = 1;
    }

    pub fn size(&self) -> u64 {
        (self.words.len() - 2 * PAD) as u64 * 4
    }

    /// Reads `bytes` (1, 2, 4 or 8) at a naturally aligned `offset` inside the memory.
    #[inline]
    pub fn load(&self, offset: u64, bytes: u32) -> u64 {
        let w = (offset / 4) as usize + PAD;
        match bytes {
            4 => self.words[w] as u64,
            8 => self.words[w] as u64 | (self.words[w + 1] as u64) << 32,
            _ => (self.words[w] as u64 >> ((offset % 4) * 8)) & super::alu::mask(bytes as u8 * 8),
        }
    }

    #[inline]
    pub fn store(&mut self, offset: u64, bytes: u32, value: u64) {
        let w = (offset / 4) as usize + PAD;
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
        let sh = &mut self.shadow;
        for word in (offset / 4) as usize..(offset + bytes as u64).div_ceil(4) as usize {
            let i = word + PAD;
            let write_epoch = sh.write_epoch[i];
            if write_epoch == 0 {
                hazard.get_or_insert(Hazard {
                    kind: FindingKind::UninitialisedSharedRead,
                    byte: word as u64 * 4,
                    other_thread: None,
                    other_pc: None,
                });
            } else if write_epoch == epoch && sh.write_thread[i] != thread {
                hazard.get_or_insert(Hazard {
                    kind: FindingKind::SharedRace,
                    byte: word as u64 * 4,
                    other_thread: Some(sh.write_thread[i]),
                    other_pc: Some(sh.write_pc[i]),
                });
            }
            if sh.read_epoch[i] == epoch {
                if sh.read_thread[i] != thread {
                    sh.read_thread[i] = MANY;
                }
            } else {
                sh.read_epoch[i] = epoch;
                sh.read_thread[i] = thread;
            }
            sh.read_pc[i] = pc;
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
        let sh = &mut self.shadow;
        for word in (offset / 4) as usize..(offset + bytes as u64).div_ceil(4) as usize {
            let i = word + PAD;
            if check {
                let same_epoch_write = sh.write_epoch[i] == epoch && sh.write_thread[i] != thread && !unchanged;
                let same_epoch_read = sh.read_epoch[i] == epoch && sh.read_thread[i] != thread;
                if same_epoch_write || same_epoch_read {
                    let (other_thread, other_pc) = if same_epoch_write {
                        (sh.write_thread[i], sh.write_pc[i])
                    } else {
                        (sh.read_thread[i], sh.read_pc[i])
                    };
                    hazard.get_or_insert(Hazard {
                        kind: FindingKind::SharedRace,
                        byte: word as u64 * 4,
                        other_thread: (other_thread != MANY).then_some(other_thread),
                        other_pc: Some(other_pc),
                    });
                }
            }
            sh.write_epoch[i] = epoch;
            sh.write_thread[i] = thread;
            sh.write_pc[i] = pc;
        }
        hazard
    }

    /// A warp's 4-byte load of a row (`threads`: each lane's thread) into `out`, with the
    /// checks of [`note_read`](Self::note_read) for all lanes at once. `false` when some
    /// lane's read is suspect: nothing has changed then, and the caller takes the lane by
    /// lane path, which reports it.
    #[inline(always)]
    pub fn load_row(&mut self, row: Row, threads: &[u32; 32], pc: u32, out: &mut [u64; 32]) -> bool {
        let at = row.slot();
        let words = lanes32(&self.words, at);
        if !self.check_hazards {
            *out = std::array::from_fn(|l| words[l] as u64);
            return true;
        }
        let (epoch, on) = (self.epoch, row.on());
        let sh = &mut self.shadow;
        let (write_epoch, write_thread) = (lanes32(&sh.write_epoch, at), lanes32(&sh.write_thread, at));
        let mut suspect = 0;
        for l in 0..32 {
            let never_written = write_epoch[l] == 0;
            let racing = write_epoch[l] == epoch && write_thread[l] != threads[l];
            suspect |= ((never_written | racing) as u32).wrapping_neg() & on[l];
        }
        if suspect != 0 {
            return false;
        }
        *out = std::array::from_fn(|l| words[l] as u64);
        let read_epoch = lanes32_mut(&mut sh.read_epoch, at);
        let read_thread = lanes32_mut(&mut sh.read_thread, at);
        for l in 0..32 {
            let first_reader = ((read_epoch[l] != epoch) as u32).wrapping_neg();
            let same_reader = ((read_thread[l] == threads[l]) as u32).wrapping_neg();
            let reader = blend(first_reader, threads[l], blend(same_reader, read_thread[l], MANY));
            read_thread[l] = blend(on[l], reader, read_thread[l]);
            read_epoch[l] = blend(on[l], epoch, read_epoch[l]);
        }
        let read_pc = lanes32_mut(&mut sh.read_pc, at);
        for l in 0..32 {
            read_pc[l] = blend(on[l], pc, read_pc[l]);
        }
        true
    }

    /// A warp's 4-byte store of a row (`values` by lane), with the checks of
    /// [`note_write`](Self::note_write) for all lanes at once. `false` when some lane's
    /// write is suspect: nothing has changed then, and the caller takes the lane by lane
    /// path, which reports it.
    #[inline(always)]
    pub fn store_row(&mut self, row: Row, threads: &[u32; 32], pc: u32, values: &[u64; 32]) -> bool {
        let at = row.slot();
        let (epoch, on) = (self.epoch, row.on());
        let values: [u32; 32] = std::array::from_fn(|l| values[l] as u32);
        let sh = &mut self.shadow;
        if self.check_hazards {
            let words = lanes32(&self.words, at);
            let (write_epoch, write_thread) = (lanes32(&sh.write_epoch, at), lanes32(&sh.write_thread, at));
            let (read_epoch, read_thread) = (lanes32(&sh.read_epoch, at), lanes32(&sh.read_thread, at));
            let mut suspect = 0;
            for l in 0..32 {
                let unchanged = words[l] == values[l];
                let other_writer = write_epoch[l] == epoch && write_thread[l] != threads[l] && !unchanged;
                let other_reader = read_epoch[l] == epoch && read_thread[l] != threads[l];
                suspect |= ((other_writer | other_reader) as u32).wrapping_neg() & on[l];
            }
            if suspect != 0 {
                return false;
            }
        }
        let words = lanes32_mut(&mut self.words, at);
        for l in 0..32 {
            words[l] = blend(on[l], values[l], words[l]);
        }
        let write_epoch = lanes32_mut(&mut sh.write_epoch, at);
        let write_thread = lanes32_mut(&mut sh.write_thread, at);
        for l in 0..32 {
            write_epoch[l] = blend(on[l], epoch, write_epoch[l]);
            write_thread[l] = blend(on[l], threads[l], write_thread[l]);
        }
        let write_pc = lanes32_mut(&mut sh.write_pc, at);
        for l in 0..32 {
            write_pc[l] = blend(on[l], pc, write_pc[l]);
        }
        true
    }
}

impl SharedMemory {
    /// Records an atomic read-modify-write by `thread`: atomics do not race with each other,
    /// but one on a word nobody initialised is reported, and the word counts as written (by
    /// "many threads", so a plain read by another thread before the next barrier is a race).
    #[inline]
    pub fn note_atomic(&mut self, offset: u64, bytes: u32, pc: u32) -> Option<Hazard> {
        let mut hazard = None;
        let sh = &mut self.shadow;
        for word in (offset / 4) as usize..(offset + bytes as u64).div_ceil(4) as usize {
            let i = word + PAD;
            if self.check_hazards && sh.write_epoch[i] == 0 {
                hazard.get_or_insert(Hazard {
                    kind: FindingKind::UninitialisedSharedRead,
                    byte: word as u64 * 4,
                    other_thread: None,
                    other_pc: None,
                });
            }
            sh.write_epoch[i] = self.epoch;
            sh.write_thread[i] = MANY;
            sh.write_pc[i] = pc;
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

    /// Shared memory of 48 words in a random state: some words never written, some written
    /// or read in this epoch by one of a few threads, contents from a small set of values.
    fn random_memory(rng: &mut impl rand::Rng) -> SharedMemory {
        let mut s = SharedMemory::new(48 * 4, true);
        s.epoch = 3;
        for w in 0..s.words.len() {
            s.words[w] = rng.random_range(0..3);
            s.shadow.write_epoch[w] = rng.random_range(0..4);
            s.shadow.write_thread[w] = rng.random_range(0..3);
            s.shadow.write_pc[w] = rng.random_range(0..5);
            s.shadow.read_epoch[w] = rng.random_range(0..4);
            s.shadow.read_thread[w] = [0, 1, 2, MANY][rng.random_range(0..4)];
            s.shadow.read_pc[w] = rng.random_range(0..5);
        }
        s
    }

    fn state(s: &SharedMemory) -> Vec<Vec<u32>> {
        let sh = &s.shadow;
        vec![
            s.words.clone(),
            sh.write_epoch.clone(),
            sh.write_thread.clone(),
            sh.write_pc.clone(),
            sh.read_epoch.clone(),
            sh.read_thread.clone(),
            sh.read_pc.clone(),
        ]
    }

    #[test]
    fn a_row_at_once_does_what_its_lanes_one_by_one_do() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
        // How often each path ran, loads and stores: [(at once, lane by lane); 2].
        let mut taken = [[0u32; 2]; 2];
        for _ in 0..20_000 {
            let mask: u32 = rng.random::<u32>() >> rng.random_range(0..32);
            if mask == 0 {
                continue;
            }
            let first_word = rng.random_range(0..16) as isize - mask.trailing_zeros() as isize;
            let row = Row { first_word, mask };
            let threads: [u32; 32] = std::array::from_fn(|_| rng.random_range(0..3));
            let values: [u64; 32] = std::array::from_fn(|_| rng.random_range(0..3));
            let words = |l: usize| (first_word + l as isize) as u64 * 4;
            let lanes = (0..32).filter(|l| (mask >> l) & 1 != 0);
            let before = random_memory(&mut rng);

            // Loads.
            let (mut at_once, mut by_lane) = (before.clone(), before.clone());
            let mut out = [0u64; 32];
            let fast = at_once.load_row(row, &threads, 9, &mut out);
            taken[0][fast as usize] += 1;
            let mut hazards = 0;
            for l in lanes.clone() {
                assert!(!fast || by_lane.load(words(l), 4) == out[l]);
                hazards += by_lane.note_read(words(l), 4, threads[l], 9).is_some() as u32;
            }
            if fast {
                assert_eq!((hazards, state(&at_once)), (0, state(&by_lane)));
            } else {
                assert!(hazards > 0 && state(&at_once) == state(&before));
            }

            // Stores.
            let (mut at_once, mut by_lane) = (before.clone(), before.clone());
            let fast = at_once.store_row(row, &threads, 9, &values);
            taken[1][fast as usize] += 1;
            let mut hazards = 0;
            for l in lanes {
                let unchanged = by_lane.store_unchanged(words(l), 4, values[l]);
                hazards += by_lane.note_write(words(l), 4, threads[l], 9, unchanged).is_some() as u32;
            }
            if fast {
                assert_eq!((hazards, state(&at_once)), (0, state(&by_lane)));
            } else {
                assert!(hazards > 0 && state(&at_once) == state(&before));
            }
        }
        assert!(taken.iter().flatten().all(|&n| n > 500), "{taken:?}");
    }
}
