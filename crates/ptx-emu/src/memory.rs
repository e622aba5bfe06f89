//! Global memory as the harness allocates it: buffers at 256-byte aligned device addresses
//! (like cudaMalloc), with gaps between them so that a stray access lands outside every
//! buffer and is reported. Words are atomics so blocks can run on several host threads
//! without data races, even when a buggy kernel writes one element from two blocks.

use super::global_races::{GlobalShadow, TRACKED_WORDS};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Generic-address windows for shared and local memory; global addresses live elsewhere.
pub const SHARED_WINDOW: u64 = 0x0000_1000_0000_0000;
pub const LOCAL_WINDOW: u64 = 0x0000_2000_0000_0000;
pub const WINDOW_SIZE: u64 = 1 << 40;
/// Cluster shared addresses (`.shared::cluster`, and the shared window of generic space): a
/// block's own memory at its plain offset, block `rank`'s at
/// `(rank + 1) << CLUSTER_RANK_SHIFT | offset`, as `mapa` makes them. 228 KiB, the most
/// shared memory a block can have, fits below.
pub const CLUSTER_RANK_SHIFT: u32 = 24;
/// Module-scope `__device__` variables and printf format strings (`Program::globals`).
pub const DEVICE_GLOBALS_BASE: u64 = 0x0000_7E00_0000_0000;
/// First global buffer; later ones follow with a gap.
const GLOBAL_BASE: u64 = 0x0000_7F00_0000_0000;
const GLOBAL_GAP: u64 = 1 << 20;
pub const ALLOCATION_ALIGN: u64 = 256;

pub struct GlobalBuffer {
    pub name: String,
    pub base: u64,
    pub bytes: u64,
    words: Vec<AtomicU32>,
    /// Whether stores into this buffer are to be noticed (the input: its words are the
    /// caller's own array, lent for the launch, which must not come back changed unnoticed).
    watch_stores: bool,
    /// Whether a store of the kernel landed in this buffer (only kept when watched).
    stored_into: AtomicBool,
    /// Which blocks wrote and read which bytes (races between blocks), made at the first
    /// store when the launch tracks races.
    races: OnceLock<GlobalShadow>,
}

impl GlobalBuffer {
    fn new(name: &str, base: u64, bytes: u64, words: Vec<AtomicU32>, watch_stores: bool) -> GlobalBuffer {
        GlobalBuffer {
            name: name.to_string(),
            base,
            bytes,
            words,
            watch_stores,
            stored_into: AtomicBool::new(false),
            races: OnceLock::new(),
        }
    }

    pub fn end(&self) -> u64 {
        self.base + self.bytes
    }
}

/// Whether `address` is a multiple of the access size `bytes`. Sizes are powers of two (1 to
/// 16 bytes), so a mask does it: the division `is_multiple_of` compiles to, with a size only
/// known at run time, was a twentieth of every global load.
#[inline(always)]
pub fn aligned(address: u64, bytes: u32) -> bool {
    if bytes.is_power_of_two() {
        address & (bytes as u64 - 1) == 0
    } else {
        address.is_multiple_of(bytes as u64)
    }
}

/// A global buffer of a [`GlobalMemory`], numbered in the order it was allocated (the
/// first allocation is `BufferId(0)`). Traces and findings name buffers by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct BufferId(pub u32);

#[derive(Default)]
pub struct GlobalMemory {
    pub(crate) buffers: Vec<GlobalBuffer>,
    /// Whether accesses are checked for races between blocks (`global_races`).
    pub track_races: bool,
    /// Lock stripes for 8-byte atomics.
    locks: [std::sync::Mutex<()>; 16],
}

/// Why a global access was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessError {
    OutOfBounds,
    Misaligned,
}

impl GlobalMemory {
    /// Allocates a buffer that takes the floats of `data` over, without a copy (at the
    /// profile sizes it is 64 MiB and more, and first touches of fresh memory were a tenth of
    /// a run), and returns its device address. A kernel may store into its input through a
    /// cast: such stores are noticed ([`GlobalMemory::stored_into`]), so that the caller
    /// knows its array came back changed.
    pub fn alloc_input(&mut self, name: &str, data: Vec<f32>) -> u64 {
        // SAFETY: AtomicU32 has the size and alignment of f32, and every f32 bit pattern is
        // a valid u32.
        self.push(name, unsafe { same_layout::<f32, AtomicU32>(data) }, true)
    }

    /// Allocates a buffer that takes `words` over, without a copy, and returns its device
    /// address (see `take_words`).
    pub fn alloc_words(&mut self, name: &str, words: Vec<u32>) -> u64 {
        // SAFETY: AtomicU32 has the size, alignment and bit validity of u32.
        self.push(name, unsafe { same_layout::<u32, AtomicU32>(words) }, false)
    }

    /// Appends a buffer of `words` after the last one, a gap between them.
    fn push(&mut self, name: &str, words: Vec<AtomicU32>, watch_stores: bool) -> u64 {
        let base = self.buffers.last().map_or(GLOBAL_BASE, |b| {
            (b.end() + GLOBAL_GAP).div_ceil(ALLOCATION_ALIGN) * ALLOCATION_ALIGN
        });
        let bytes = words.len() as u64 * 4;
        self.buffers
            .push(GlobalBuffer::new(name, base, bytes, words, watch_stores));
        base
    }

    /// The race state of `buffer` for an access (`store`: made at the first store), when the
    /// launch tracks races and the buffer is small enough; None otherwise.
    #[inline]
    pub(crate) fn races(&self, buffer: usize, store: bool) -> Option<&GlobalShadow> {
        let b = &self.buffers[buffer];
        if !self.track_races || b.words.len() > TRACKED_WORDS {
            return None;
        }
        if store {
            Some(b.races.get_or_init(|| GlobalShadow::new(b.words.len())))
        } else {
            b.races.get()
        }
    }

    /// Whether a store landed in `buffer` (known for a buffer from `alloc_input`).
    pub fn stored_into(&self, buffer: BufferId) -> bool {
        self.buffers[buffer.0 as usize].stored_into.load(Ordering::Relaxed)
    }

    /// The 32 words of `buffer` from word `first` on, when all lie inside it: a warp's row
    /// of 4-byte elements, lane `l` at word `first + l`, read or written without working
    /// out each lane's word and checking its bounds (stores must call `note_store`).
    #[inline(always)]
    pub(crate) fn row_words(&self, buffer: usize, first: isize) -> Option<&[AtomicU32; 32]> {
        let first = usize::try_from(first).ok()?;
        self.buffers[buffer].words.get(first..first + 32)?.try_into().ok()
    }

    /// Remembers a store into `buffer` when that buffer is watched; a read of a flag that
    /// rarely changes, so the threads do not fight over its cache line.
    #[inline(always)]
    pub(crate) fn note_store(&self, buffer: usize) {
        let b = &self.buffers[buffer];
        if b.watch_stores && !b.stored_into.load(Ordering::Relaxed) {
            b.stored_into.store(true, Ordering::Relaxed);
        }
    }

    /// `buffer`'s contents as floats, moved out without a copy (the buffer is left empty).
    pub fn take_f32(&mut self, buffer: BufferId) -> Vec<f32> {
        let b = &mut self.buffers[buffer.0 as usize];
        b.bytes = 0;
        // SAFETY: f32 has the size and alignment of AtomicU32 and every bit pattern is a
        // valid f32; `&mut self` means no access is in flight.
        unsafe { same_layout::<AtomicU32, f32>(std::mem::take(&mut b.words)) }
    }

    /// Buffer index holding `[address, address + bytes)`.
    #[inline]
    pub(crate) fn find(&self, address: u64, bytes: u32) -> Result<usize, AccessError> {
        if !aligned(address, bytes) {
            return Err(AccessError::Misaligned);
        }
        for (i, b) in self.buffers.iter().enumerate() {
            if address >= b.base && address + bytes as u64 <= b.end() {
                return Ok(i);
            }
        }
        Err(AccessError::OutOfBounds)
    }

    #[inline]
    pub(crate) fn load(&self, buffer: usize, address: u64, bytes: u32) -> u64 {
        let b = &self.buffers[buffer];
        let offset = address - b.base;
        let word = (offset / 4) as usize;
        match bytes {
            4 => b.words[word].load(Ordering::Relaxed) as u64,
            8 => {
                b.words[word].load(Ordering::Relaxed) as u64 | (b.words[word + 1].load(Ordering::Relaxed) as u64) << 32
            }
            _ => {
                let shift = (offset % 4) * 8;
                (b.words[word].load(Ordering::Relaxed) as u64 >> shift) & super::alu::mask(bytes as u8 * 8)
            }
        }
    }

    /// A 4- or 8-byte load at word `word` of `buffer` (aligned and in bounds: the caller checked).
    #[inline(always)]
    pub(crate) fn load_words(&self, buffer: usize, word: usize, bytes: u64) -> u64 {
        let w = &self.buffers[buffer].words;
        let low = w[word].load(Ordering::Relaxed) as u64;
        if bytes == 8 {
            low | (w[word + 1].load(Ordering::Relaxed) as u64) << 32
        } else {
            low
        }
    }

    /// A 4- or 8-byte store at word `word` of `buffer` (aligned and in bounds).
    #[inline(always)]
    pub(crate) fn store_words(&self, buffer: usize, word: usize, bytes: u64, value: u64) {
        self.note_store(buffer);
        let w = &self.buffers[buffer].words;
        w[word].store(value as u32, Ordering::Relaxed);
        if bytes == 8 {
            w[word + 1].store((value >> 32) as u32, Ordering::Relaxed);
        }
    }

    #[inline]
    pub(crate) fn store(&self, buffer: usize, address: u64, bytes: u32, value: u64) {
        self.note_store(buffer);
        let b = &self.buffers[buffer];
        let offset = address - b.base;
        let word = (offset / 4) as usize;
        match bytes {
            4 => b.words[word].store(value as u32, Ordering::Relaxed),
            8 => {
                b.words[word].store(value as u32, Ordering::Relaxed);
                b.words[word + 1].store((value >> 32) as u32, Ordering::Relaxed);
            }
            _ => {
                let shift = (offset % 4) * 8;
                let m = (super::alu::mask(bytes as u8 * 8) as u32) << shift;
                let _ = b.words[word].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                    Some((old & !m) | (((value as u32) << shift) & m))
                });
            }
        }
    }

    /// Atomically replaces the `bytes` (4 or 8) at `address` with `f(old)`; returns `old`.
    /// 8-byte values take a lock stripe: the words are 4 bytes each.
    pub(crate) fn read_modify_write(&self, buffer: usize, address: u64, bytes: u32, f: impl Fn(u64) -> u64) -> u64 {
        self.note_store(buffer);
        let b = &self.buffers[buffer];
        let word = ((address - b.base) / 4) as usize;
        if bytes == 4 {
            let old = b.words[word]
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| Some(f(old as u64) as u32))
                .unwrap_or_else(|v| v);
            return old as u64;
        }
        let stripe = &self.locks[(address as usize / 8) % self.locks.len()];
        let _guard = stripe.lock().unwrap_or_else(|e| e.into_inner());
        let old = self.load(buffer, address, 8);
        self.store(buffer, address, 8, f(old));
        old
    }

    /// Allocates module-scope variable bytes at a fixed `base` (see `Program::globals`).
    pub(crate) fn alloc_bytes_at(&mut self, name: &str, base: u64, bytes: u64, init: &[u8]) {
        let words = (0..bytes.div_ceil(4) as usize)
            .map(|w| {
                let mut v = [0u8; 4];
                for (i, slot) in v.iter_mut().enumerate() {
                    *slot = init.get(w * 4 + i).copied().unwrap_or(0);
                }
                AtomicU32::new(u32::from_le_bytes(v))
            })
            .collect();
        self.buffers.push(GlobalBuffer::new(name, base, bytes, words, false));
    }

    /// A NUL-terminated string at `address` (printf formats, assert messages), at most
    /// `limit` bytes; None when the address is in no buffer.
    pub(crate) fn read_c_string(&self, address: u64, limit: usize) -> Option<String> {
        let buffer = self.find(address, 1).ok()?;
        let b = &self.buffers[buffer];
        let mut bytes = Vec::new();
        let mut at = address;
        while at < b.end() && bytes.len() < limit {
            let c = self.load(buffer, at, 1) as u8;
            if c == 0 {
                break;
            }
            bytes.push(c);
            at += 1;
        }
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Where an address lies, in words a learner can act on: inside a buffer (`byte 6 of
    /// `in` (132 bytes)`), before the first buffer, past the end of one (and before the
    /// next: between two buffers), or near address 0 (a null pointer and an offset).
    pub(crate) fn describe_address(&self, address: u64) -> String {
        const NULL_PAGE: u64 = 1 << 16;
        if address < NULL_PAGE {
            return format!("a null pointer plus {address} bytes");
        }
        // The buffers the lesson gives a kernel are float arrays: the index a learner wrote.
        let size = |b: &GlobalBuffer| {
            let index = (address as i128 - b.base as i128).div_euclid(4);
            let floats = b.bytes / 4;
            if address % 4 == b.base % 4 && floats > 0 {
                format!(
                    "`{}` ({} bytes: that is {}[{index}] of {}[0..{}])",
                    b.name,
                    b.bytes,
                    b.name,
                    b.name,
                    floats - 1
                )
            } else {
                format!("`{}` ({} bytes)", b.name, b.bytes)
            }
        };
        if let Some(b) = self.buffers.iter().find(|b| address >= b.base && address < b.end()) {
            return format!("byte {} of {}", address - b.base, size(b));
        }
        let before = self
            .buffers
            .iter()
            .filter(|b| b.end() <= address)
            .max_by_key(|b| b.end());
        let after = self.buffers.iter().filter(|b| b.base > address).min_by_key(|b| b.base);
        match (before, after) {
            (Some(b), Some(a)) if address - b.end() <= a.base - address => format!(
                "{} bytes past the end of {}, in the gap before `{}`",
                address - b.end(),
                size(b),
                a.name
            ),
            (Some(b), Some(a)) => format!(
                "{} bytes before the start of {}, in the gap after `{}`",
                a.base - address,
                size(a),
                b.name
            ),
            (Some(b), None) => format!("{} bytes past the end of {}", address - b.end(), size(b)),
            (None, Some(a)) => format!("{} bytes before the start of {}", a.base - address, size(a)),
            (None, None) => "no buffers allocated".into(),
        }
    }
}

/// `v`'s allocation as a vector of `B`, without a copy: the emulator's buffers are atomic
/// words, the harness's are floats, and at the profile sizes each is 64 MiB or more.
///
/// # Safety
/// `A` and `B` must have the same size and alignment, and every bit pattern of an `A` must
/// be a valid `B`.
unsafe fn same_layout<A, B>(v: Vec<A>) -> Vec<B> {
    assert!(size_of::<A>() == size_of::<B>() && align_of::<A>() == align_of::<B>());
    let mut v = std::mem::ManuallyDrop::new(v);
    let (ptr, len, capacity) = (v.as_mut_ptr(), v.len(), v.capacity());
    // SAFETY: the allocation moves over whole (the original is never dropped) to a type of
    // the same layout (the caller's contract).
    unsafe { Vec::from_raw_parts(ptr as *mut B, len, capacity) }
}
