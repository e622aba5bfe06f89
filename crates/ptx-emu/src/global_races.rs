//! Races between blocks in global memory: nothing orders the blocks of one launch, so a
//! thread that writes bytes another block also writes (with other bits) or reads, in the
//! same launch, races with it. compute-sanitizer has no tool for this (racecheck watches
//! shared memory only); the emulator checks it because a learner's kernel that, say, lets two
//! blocks write one output element has a result that depends on the schedule.
//!
//! What is remembered, per 4-byte word of a buffer: the last writer (block, thread,
//! instruction, the bytes written, whether by atomics) and the first reader (the same, and
//! whether readers of several blocks came). Where two blocks wrote different bytes of one
//! word, the word's state moves to a per-byte table, so disjoint bytes never race. The state
//! is a pair of `AtomicU64` per word, kept only for buffers the kernel stores into (the
//! shadow is made at the first store) and only in launches small enough
//! ([`TRACKED_WORDS`]): races are a property of the code, which the lesson's small sizes
//! show as well as its profile size.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Buffers of at most this many 4-byte words get a shadow (16 MiB of data, 64 MiB of
/// shadow): every verification size of every lesson below its profile size.
pub const TRACKED_WORDS: usize = 1 << 22;

// An access, packed in a u64: block index + 1 (0: none), thread, pc, byte mask, flags.
const BLOCK_BITS: u32 = 24;
const THREAD_SHIFT: u32 = 24;
const THREAD_BITS: u32 = 10;
const PC_SHIFT: u32 = 34;
const PC_BITS: u32 = 20;
const MASK_SHIFT: u32 = 54;
/// Atomics wrote it.
const ATOMIC: u64 = 1 << 58;
/// Accesses of more than one block (readers of several blocks; atomics of several blocks).
const MANY: u64 = 1 << 59;
/// The word's state lives in the per-byte table.
const SPLIT: u64 = 1 << 60;

fn field(v: u64, shift: u32, bits: u32) -> u64 {
    (v >> shift) & ((1 << bits) - 1)
}

/// Who makes an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Who {
    pub block: u64,
    pub thread: u32,
    pub pc: u32,
}

impl Who {
    fn pack(self, mask: u64, flags: u64) -> u64 {
        ((self.block + 1) & ((1 << BLOCK_BITS) - 1))
            | (self.thread as u64 & ((1 << THREAD_BITS) - 1)) << THREAD_SHIFT
            | (self.pc as u64 & ((1 << PC_BITS) - 1)) << PC_SHIFT
            | mask << MASK_SHIFT
            | flags
    }

    fn unpack(v: u64) -> Option<Who> {
        let block = field(v, 0, BLOCK_BITS);
        (block != 0).then(|| Who {
            block: block - 1,
            thread: field(v, THREAD_SHIFT, THREAD_BITS) as u32,
            pc: field(v, PC_SHIFT, PC_BITS) as u32,
        })
    }
}

fn mask_of(v: u64) -> u64 {
    field(v, MASK_SHIFT, 4)
}

/// What an access does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// `unchanged`: it stored the bits that were there already.
    Write {
        unchanged: bool,
    },
    Atomic,
}

/// The other side of a race: who, and which byte of the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict {
    pub other: Who,
    /// Whether the other access wrote (else it read).
    pub other_wrote: bool,
    pub byte: u64,
}

/// One buffer's race state.
pub struct GlobalShadow {
    written: Vec<AtomicU64>,
    read: Vec<AtomicU64>,
    /// Per byte (buffer offset), for split words: (written, read), masks of one bit.
    bytes: Mutex<HashMap<u64, (u64, u64)>>,
}

impl GlobalShadow {
    pub fn new(words: usize) -> GlobalShadow {
        GlobalShadow {
            written: (0..words).map(|_| AtomicU64::new(0)).collect(),
            read: (0..words).map(|_| AtomicU64::new(0)).collect(),
            bytes: Mutex::new(HashMap::new()),
        }
    }

    /// Notes `access` of `bytes` bytes at buffer offset `offset` by `who`; the first race
    /// it makes with another block's access, if any.
    pub fn note(&self, offset: u64, bytes: u32, access: Access, who: Who) -> Option<Conflict> {
        let mut conflict = None;
        let end = offset + bytes as u64;
        for word in offset / 4..end.div_ceil(4) {
            let lo = offset.max(word * 4);
            let hi = end.min(word * 4 + 4);
            let mask = ((1u64 << (hi - lo)) - 1) << (lo % 4);
            let found = self.note_word(word as usize, mask, access, who);
            conflict = conflict.or(found);
        }
        conflict
    }

    fn note_word(&self, word: usize, mask: u64, access: Access, who: Who) -> Option<Conflict> {
        let (written, read) = (&self.written[word], &self.read[word]);
        if written.load(Ordering::Relaxed) & SPLIT != 0 {
            return self.note_bytes(word, mask, access, who);
        }
        let mut conflict = None;
        // Against the writer: another block's overlapping write (not both atomics, not the
        // same bits stored again).
        let mut w = written.load(Ordering::Relaxed);
        loop {
            let writer = Who::unpack(w);
            let other_block = writer.is_some_and(|o| o.block != who.block) || (w & MANY != 0);
            let overlap = mask_of(w) & mask != 0;
            if let Some(o) = writer
                && other_block
                && overlap
            {
                let both_atomic = access == Access::Atomic && w & ATOMIC != 0;
                let same_bits = access == (Access::Write { unchanged: true }) && w & ATOMIC == 0;
                if !both_atomic && !same_bits && conflict.is_none() {
                    conflict = Some(Conflict {
                        other: o,
                        other_wrote: true,
                        byte: word as u64 * 4 + (mask_of(w) & mask).trailing_zeros() as u64,
                    });
                }
            }
            if access == Access::Read {
                break;
            }
            if writer.is_some_and(|o| o.block != who.block) && !overlap && w & (ATOMIC | MANY) == 0 {
                // Two blocks, different bytes of one word: from now on byte by byte.
                if self.split(word, w) {
                    return self.note_bytes(word, mask, access, who).or(conflict);
                }
                w = written.load(Ordering::Relaxed);
                continue;
            }
            let flags = match access {
                Access::Atomic if w & ATOMIC != 0 && other_block => ATOMIC | MANY,
                Access::Atomic => ATOMIC,
                _ => 0,
            };
            let keep = if writer.is_some_and(|o| o.block == who.block) {
                mask_of(w)
            } else {
                0
            };
            let new = who.pack(keep | mask, flags);
            match written.compare_exchange_weak(w, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) if now & SPLIT != 0 => return self.note_bytes(word, mask, access, who).or(conflict),
                Err(now) => w = now,
            }
        }
        // Against the readers: a write after another block's read of these bytes.
        let mut r = read.load(Ordering::Relaxed);
        loop {
            let reader = Who::unpack(r);
            let other_block = reader.is_some_and(|o| o.block != who.block) || (r & MANY != 0);
            if access != Access::Read {
                if let Some(o) = reader
                    && other_block
                    && mask_of(r) & mask != 0
                    && conflict.is_none()
                {
                    let other = if o.block == who.block {
                        Who { block: u64::MAX, ..o }
                    } else {
                        o
                    };
                    conflict = Some(Conflict {
                        other,
                        other_wrote: false,
                        byte: word as u64 * 4 + (mask_of(r) & mask).trailing_zeros() as u64,
                    });
                }
                break;
            }
            // A read: remember the first reader, and whether other blocks read too.
            let new = match reader {
                None => who.pack(mask, 0),
                Some(o) if o.block == who.block => r | mask << MASK_SHIFT,
                Some(_) => r | mask << MASK_SHIFT | MANY,
            };
            if new == r {
                break;
            }
            match read.compare_exchange_weak(r, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => r = now,
            }
        }
        conflict
    }

    /// Moves word `word` (whose written state was `w`) to the per-byte table; false when
    /// another thread changed it first (the caller looks again).
    fn split(&self, word: usize, w: u64) -> bool {
        let mut table = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        if self.written[word].load(Ordering::Relaxed) != w {
            return false;
        }
        let r = self.read[word].load(Ordering::Relaxed);
        for k in 0..4u64 {
            let with_mask = |v: u64| {
                if mask_of(v) >> k & 1 != 0 {
                    (v & !(0xF << MASK_SHIFT)) | 1 << MASK_SHIFT
                } else {
                    0
                }
            };
            table.insert(word as u64 * 4 + k, (with_mask(w), with_mask(r)));
        }
        self.written[word].store(SPLIT, Ordering::Relaxed);
        true
    }

    /// The per-byte path: the same rules, one byte at a time, under the table's lock.
    fn note_bytes(&self, word: usize, mask: u64, access: Access, who: Who) -> Option<Conflict> {
        let mut table = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        let mut conflict = None;
        for k in 0..4u64 {
            if mask >> k & 1 == 0 {
                continue;
            }
            let byte = word as u64 * 4 + k;
            let (w, r) = table.entry(byte).or_insert((0, 0));
            let (writer, reader) = (Who::unpack(*w), Who::unpack(*r));
            let other = |o: Option<Who>, v: u64| o.is_some_and(|o| o.block != who.block) || v & MANY != 0;
            if let Some(o) = writer
                && other(writer, *w)
            {
                let both_atomic = access == Access::Atomic && *w & ATOMIC != 0;
                let same_bits = access == (Access::Write { unchanged: true }) && *w & ATOMIC == 0;
                if !both_atomic && !same_bits {
                    conflict = conflict.or(Some(Conflict {
                        other: o,
                        other_wrote: true,
                        byte,
                    }));
                }
            }
            if access == Access::Read {
                *r = match reader {
                    None => who.pack(1, 0),
                    Some(o) if o.block == who.block => *r,
                    Some(_) => *r | MANY,
                };
            } else {
                if let Some(o) = reader
                    && other(reader, *r)
                {
                    conflict = conflict.or(Some(Conflict {
                        other: o,
                        other_wrote: false,
                        byte,
                    }));
                }
                let flags = match access {
                    Access::Atomic if *w & ATOMIC != 0 && other(writer, *w) => ATOMIC | MANY,
                    Access::Atomic => ATOMIC,
                    _ => 0,
                };
                *w = who.pack(1, flags);
            }
        }
        conflict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by(block: u64, thread: u32) -> Who {
        Who { block, thread, pc: 7 }
    }

    const WRITE: Access = Access::Write { unchanged: false };

    #[test]
    fn one_block_never_races_with_itself() {
        let s = GlobalShadow::new(4);
        assert!(s.note(0, 4, WRITE, by(0, 1)).is_none());
        assert!(s.note(0, 4, Access::Read, by(0, 2)).is_none());
        assert!(s.note(0, 4, WRITE, by(0, 3)).is_none());
    }

    #[test]
    fn two_blocks_on_the_same_bytes_race_with_different_bits() {
        let s = GlobalShadow::new(4);
        assert!(s.note(4, 4, WRITE, by(0, 1)).is_none());
        // The same bits stored again by another block: the memory is the same either way.
        assert!(s.note(4, 4, Access::Write { unchanged: true }, by(1, 1)).is_none());
        let c = s.note(4, 4, WRITE, by(2, 5)).unwrap();
        assert_eq!((c.other.block, c.other_wrote, c.byte), (1, true, 4));
        // A read of another block's write, and a write after another block's read.
        assert_eq!(s.note(4, 4, Access::Read, by(3, 0)).unwrap().other.block, 2);
        assert!(s.note(8, 4, Access::Read, by(4, 9)).is_none());
        let war = s.note(8, 4, WRITE, by(5, 1)).unwrap();
        assert_eq!((war.other.block, war.other.thread, war.other_wrote), (4, 9, false));
    }

    #[test]
    fn blocks_writing_different_bytes_of_a_word_do_not_race() {
        let s = GlobalShadow::new(4);
        for b in 0..4u64 {
            assert!(s.note(b, 1, WRITE, by(b, 0)).is_none(), "block {b}");
        }
        // Each block again on its own byte: still nothing; on a neighbour's: a race.
        assert!(s.note(2, 1, WRITE, by(2, 0)).is_none());
        let c = s.note(2, 2, WRITE, by(2, 0)).unwrap();
        assert_eq!((c.other.block, c.byte), (3, 3));
        // 2-byte halves by two blocks.
        assert!(s.note(4, 2, WRITE, by(0, 0)).is_none());
        assert!(s.note(6, 2, WRITE, by(1, 0)).is_none());
        assert!(s.note(4, 2, Access::Read, by(0, 1)).is_none());
        assert_eq!(s.note(4, 4, Access::Read, by(0, 1)).unwrap().other.block, 1);
    }

    #[test]
    fn atomics_of_many_blocks_do_not_race_but_a_plain_access_does() {
        let s = GlobalShadow::new(2);
        for b in 0..3 {
            assert!(s.note(0, 4, Access::Atomic, by(b, 0)).is_none());
        }
        assert!(s.note(0, 4, Access::Read, by(7, 0)).is_some());
        assert!(s.note(0, 4, WRITE, by(0, 0)).is_some());
    }
}
