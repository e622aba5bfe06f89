//! Global memory as the harness allocates it: buffers at 256-byte aligned device addresses
//! (like cudaMalloc), with gaps between them so that a stray access lands outside every
//! buffer and is reported. Words are atomics so blocks can run on several host threads
//! without data races, even when a buggy kernel writes one element from two blocks.

use std::sync::atomic::{AtomicU32, Ordering};

/// Generic-address windows for shared and local memory; global addresses live elsewhere.
pub const SHARED_WINDOW: u64 = 0x0000_1000_0000_0000;
pub const LOCAL_WINDOW: u64 = 0x0000_2000_0000_0000;
pub const WINDOW_SIZE: u64 = 1 << 40;
/// First global buffer; later ones follow with a gap.
const GLOBAL_BASE: u64 = 0x0000_7F00_0000_0000;
const GLOBAL_GAP: u64 = 1 << 20;
pub const ALLOCATION_ALIGN: u64 = 256;

pub struct GlobalBuffer {
    pub name: String,
    pub base: u64,
    pub bytes: u64,
    words: Vec<AtomicU32>,
}

impl GlobalBuffer {
    pub fn end(&self) -> u64 {
        self.base + self.bytes
    }
}

#[derive(Default)]
pub struct GlobalMemory {
    pub buffers: Vec<GlobalBuffer>,
}

/// Why a global access was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessError {
    OutOfBounds,
    Misaligned,
}

impl GlobalMemory {
    /// Allocates a buffer holding `data` and returns its device address.
    pub fn alloc_f32(&mut self, name: &str, data: &[f32]) -> u64 {
        let base = self.buffers.last().map_or(GLOBAL_BASE, |b| {
            (b.end() + GLOBAL_GAP).div_ceil(ALLOCATION_ALIGN) * ALLOCATION_ALIGN
        });
        let words = data.iter().map(|v| AtomicU32::new(v.to_bits())).collect();
        self.buffers.push(GlobalBuffer {
            name: name.to_string(),
            base,
            bytes: data.len() as u64 * 4,
            words,
        });
        base
    }

    pub fn read_f32(&self, index: usize) -> Vec<f32> {
        self.buffers[index]
            .words
            .iter()
            .map(|w| f32::from_bits(w.load(Ordering::Relaxed)))
            .collect()
    }

    /// Copies a buffer's contents out into `out`.
    pub fn copy_out(&self, index: usize, out: &mut [f32]) {
        for (o, w) in out.iter_mut().zip(&self.buffers[index].words) {
            *o = f32::from_bits(w.load(Ordering::Relaxed));
        }
    }

    /// Buffer index holding `[address, address + bytes)`.
    #[inline]
    pub fn find(&self, address: u64, bytes: u32) -> Result<usize, AccessError> {
        if !address.is_multiple_of(bytes as u64) {
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
    pub fn load(&self, buffer: usize, address: u64, bytes: u32) -> u64 {
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

    #[inline]
    pub fn store(&self, buffer: usize, address: u64, bytes: u32, value: u64) {
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

    /// Where an out-of-bounds address is, relative to the nearest buffer, in words.
    pub fn describe_address(&self, address: u64) -> String {
        let nearest = self.buffers.iter().min_by_key(|b| {
            if address < b.base {
                b.base - address
            } else {
                address.saturating_sub(b.end())
            }
        });
        match nearest {
            Some(b) if address < b.base => {
                format!(
                    "{} bytes before the start of `{}` ({} bytes)",
                    b.base - address,
                    b.name,
                    b.bytes
                )
            }
            Some(b) if address >= b.end() => {
                format!(
                    "{} bytes past the end of `{}` ({} bytes)",
                    address - b.end(),
                    b.name,
                    b.bytes
                )
            }
            Some(b) => format!("inside `{}`", b.name),
            None => "no buffers allocated".into(),
        }
    }
}
