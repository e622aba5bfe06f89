//! The output buffer is filled with a NaN bit pattern before every launch, so an element the
//! kernel never wrote is told apart from one it wrote wrongly.

/// A quiet NaN with a payload no float arithmetic produces (GPUs emit the canonical NaN).
pub const POISON_BITS: u32 = 0x7FC0_DEAD;

pub fn poisoned_output(count: usize) -> Vec<f32> {
    let mut output = super::buffers::zeroed_f32(count);
    super::parallel::fill_in_chunks(&mut output, |_, part| part.fill(f32::from_bits(POISON_BITS)));
    output
}

pub fn is_poison(value: f32) -> bool {
    value.to_bits() == POISON_BITS
}
