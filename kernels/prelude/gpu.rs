// haloscope's kernel prelude for Rust: what a stencil kernel needs, on a `// #![no_core]` crate
// compiled by stable rustc for nvptx64-nvidia-cuda (nightly features unlocked with
// RUSTC_BOOTSTRAP=1, as haloscope does). A kernel file starts with `use crate::gpu::*;`.
//
// It provides the language items the compiler needs for arithmetic and comparisons on
// f32/i32/u32/i64, thread and block indices, the block barrier, raw loads and stores that
// keep global address spaces visible to LLVM (`load!`, `store!`), and a static shared tile
// (`shared_tile!`, `tile!`).

// ---- language items -------------------------------------------------------------------
#[lang = "pointee_sized"]
pub trait PointeeSized {}
#[lang = "meta_sized"]
pub trait MetaSized: PointeeSized {}
#[lang = "sized"]
pub trait Sized: MetaSized {}
#[lang = "copy"]
pub trait Copy {}
#[lang = "freeze"]
pub unsafe auto trait Freeze {}
#[lang = "legacy_receiver"]
pub trait LegacyReceiver {}
impl<T: PointeeSized> LegacyReceiver for &T {}
impl<T: PointeeSized> LegacyReceiver for &mut T {}

macro_rules! copy_types { ($($t:ty)*) => { $(impl Copy for $t {})* } }
copy_types!(bool f32 i32 u32 i64 u64 isize usize);
impl<T: PointeeSized> Copy for *const T {}
impl<T: PointeeSized> Copy for *mut T {}

#[lang = "add"]
pub trait Add<Rhs = Self> { type Output; fn add(self, rhs: Rhs) -> Self::Output; }
#[lang = "sub"]
pub trait Sub<Rhs = Self> { type Output; fn sub(self, rhs: Rhs) -> Self::Output; }
#[lang = "mul"]
pub trait Mul<Rhs = Self> { type Output; fn mul(self, rhs: Rhs) -> Self::Output; }
#[lang = "div"]
pub trait Div<Rhs = Self> { type Output; fn div(self, rhs: Rhs) -> Self::Output; }
#[lang = "rem"]
pub trait Rem<Rhs = Self> { type Output; fn rem(self, rhs: Rhs) -> Self::Output; }
#[lang = "neg"]
pub trait Neg { type Output; fn neg(self) -> Self::Output; }
#[lang = "not"]
pub trait Not { type Output; fn not(self) -> Self::Output; }
#[lang = "add_assign"]
pub trait AddAssign<Rhs = Self> { fn add_assign(&mut self, rhs: Rhs); }
#[lang = "bitand"]
pub trait BitAnd<Rhs = Self> { type Output; fn bitand(self, rhs: Rhs) -> Self::Output; }
#[lang = "bitor"]
pub trait BitOr<Rhs = Self> { type Output; fn bitor(self, rhs: Rhs) -> Self::Output; }
#[lang = "eq"]
pub trait PartialEq<Rhs: PointeeSized = Self> {
    fn eq(&self, other: &Rhs) -> bool;
    fn ne(&self, other: &Rhs) -> bool;
}
#[lang = "partial_ord"]
pub trait PartialOrd<Rhs: PointeeSized = Self>: PartialEq<Rhs> {
    fn lt(&self, other: &Rhs) -> bool;
    fn le(&self, other: &Rhs) -> bool;
    fn gt(&self, other: &Rhs) -> bool;
    fn ge(&self, other: &Rhs) -> bool;
}

// The compiler implements these operators on primitives itself; the impls only name them.
macro_rules! numbers { ($($t:ty)*) => { $(
    impl Add for $t { type Output = $t; #[inline(always)] fn add(self, r: $t) -> $t { self + r } }
    impl Sub for $t { type Output = $t; #[inline(always)] fn sub(self, r: $t) -> $t { self - r } }
    impl Mul for $t { type Output = $t; #[inline(always)] fn mul(self, r: $t) -> $t { self * r } }
    impl Div for $t { type Output = $t; #[inline(always)] fn div(self, r: $t) -> $t { self / r } }
    impl Rem for $t { type Output = $t; #[inline(always)] fn rem(self, r: $t) -> $t { self % r } }
    impl AddAssign for $t { #[inline(always)] fn add_assign(&mut self, r: $t) { *self = *self + r; } }
    impl PartialEq for $t {
        #[inline(always)] fn eq(&self, o: &$t) -> bool { *self == *o }
        #[inline(always)] fn ne(&self, o: &$t) -> bool { *self != *o }
    }
    impl PartialOrd for $t {
        #[inline(always)] fn lt(&self, o: &$t) -> bool { *self < *o }
        #[inline(always)] fn le(&self, o: &$t) -> bool { *self <= *o }
        #[inline(always)] fn gt(&self, o: &$t) -> bool { *self > *o }
        #[inline(always)] fn ge(&self, o: &$t) -> bool { *self >= *o }
    }
)* } }
numbers!(f32 i32 u32 i64 u64 isize usize);
macro_rules! signed { ($($t:ty)*) => { $(
    impl Neg for $t { type Output = $t; #[inline(always)] fn neg(self) -> $t { -self } }
)* } }
signed!(f32 i32 i64 isize);
impl Not for bool { type Output = bool; #[inline(always)] fn not(self) -> bool { !self } }
impl BitAnd for bool { type Output = bool; #[inline(always)] fn bitand(self, r: bool) -> bool { self & r } }
impl BitOr for bool { type Output = bool; #[inline(always)] fn bitor(self, r: bool) -> bool { self | r } }
impl PartialEq for bool {
    #[inline(always)] fn eq(&self, o: &bool) -> bool { *self == *o }
    #[inline(always)] fn ne(&self, o: &bool) -> bool { *self != *o }
}

// Integer division checks divide by zero and overflow, and calls these when they fail: the
// kernel stops with a trap (the GPU reports a launch failure, the emulator a fault).
#[lang = "panic_location"]
pub struct Location<'a> {
    file: &'a str,
    line: u32,
    col: u32,
}
macro_rules! panics { ($($name:ident)*) => { $(
    #[lang = stringify!($name)]
    pub fn $name() -> ! {
        unsafe { asm!("trap;", options(nostack, noreturn)) }
    }
)* } }
panics!(panic_const_div_by_zero panic_const_div_overflow panic_const_rem_by_zero panic_const_rem_overflow);

#[rustc_builtin_macro]
pub macro asm("assembly template", $(operands,)* $(options($(option),*))?) { /* compiler built-in */ }
#[rustc_builtin_macro]
pub macro concat($($arg:tt)*) { /* compiler built-in */ }
#[rustc_builtin_macro]
pub macro stringify($($arg:tt)*) { /* compiler built-in */ }

// ---- threads and blocks --------------------------------------------------------------
unsafe extern "C" {
    #[link_name = "llvm.nvvm.read.ptx.sreg.tid.x"] fn tid_x() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.tid.y"] fn tid_y() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.tid.z"] fn tid_z() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.ctaid.x"] fn ctaid_x() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.ctaid.y"] fn ctaid_y() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.ctaid.z"] fn ctaid_z() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.ntid.x"] fn ntid_x() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.ntid.y"] fn ntid_y() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.ntid.z"] fn ntid_z() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.nctaid.x"] fn nctaid_x() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.nctaid.y"] fn nctaid_y() -> i32;
    #[link_name = "llvm.nvvm.read.ptx.sreg.nctaid.z"] fn nctaid_z() -> i32;
    #[link_name = "llvm.nvvm.barrier0"] fn barrier0();
}

/// A CUDA `dim3`, as i32 so that index arithmetic needs no casts.
pub struct Dim3 {
    pub x: i32,
    pub y: i32,
    pub z: i32,
}

/// `threadIdx`
#[inline(always)]
pub fn thread_idx() -> Dim3 { unsafe { Dim3 { x: tid_x(), y: tid_y(), z: tid_z() } } }
/// `blockIdx`
#[inline(always)]
pub fn block_idx() -> Dim3 { unsafe { Dim3 { x: ctaid_x(), y: ctaid_y(), z: ctaid_z() } } }
/// `blockDim`
#[inline(always)]
pub fn block_dim() -> Dim3 { unsafe { Dim3 { x: ntid_x(), y: ntid_y(), z: ntid_z() } } }
/// `gridDim`
#[inline(always)]
pub fn grid_dim() -> Dim3 { unsafe { Dim3 { x: nctaid_x(), y: nctaid_y(), z: nctaid_z() } } }

/// `__syncthreads()`: every thread of the block waits here for all the others.
#[inline(always)]
pub fn sync_threads() { unsafe { barrier0() } }

#[inline(always)]
pub fn min(a: i32, b: i32) -> i32 { if a < b { a } else { b } }

// ---- global memory -------------------------------------------------------------------
// Loads and stores are macros, not functions: `collapse_debuginfo` gives their code the line
// of the kernel that used them, so sectors are shown on the learner's lines.

/// `load!(p[i])`: reads `p[i]` from a kernel's pointer (`i` any integer).
#[collapse_debuginfo(yes)]
pub macro load($p:ident [ $i:expr ]) {
    unsafe { *$crate::gpu::offset($p, ($i) as isize) }
}

/// `store!(p[i] = v)`: writes `v` to `p[i]`.
#[collapse_debuginfo(yes)]
pub macro store($p:ident [ $i:expr ] = $v:expr) {
    unsafe { *$crate::gpu::offset($p, ($i) as isize) = $v }
}

#[rustc_intrinsic]
pub unsafe fn offset<Ptr, Delta>(dst: Ptr, offset: Delta) -> Ptr;

// ---- shared memory -------------------------------------------------------------------
/// A static `__shared__ float name[rows][cols]` of the block, made by [`shared_tile!`].
pub struct SharedTile {
    /// Address of element (0, 0) in the shared window.
    pub base: u32,
    pub cols: u32,
}

/// `tile!(t[r][c])` reads a tile cell, `tile!(t[r][c] = v)` writes one.
#[collapse_debuginfo(yes)]
pub macro tile {
    ($t:ident [ $r:expr ] [ $c:expr ] = $v:expr) => {{
        let at: u32 = $t.base + ((($r) as u32) * $t.cols + ($c) as u32) * 4;
        let v: f32 = $v;
        unsafe { $crate::gpu::asm!("st.shared.f32 [{0}], {1};", in(reg32) at, in(reg32) v, options(nostack)) };
    }},
    ($t:ident [ $r:expr ] [ $c:expr ]) => {{
        let at: u32 = $t.base + ((($r) as u32) * $t.cols + ($c) as u32) * 4;
        let v: f32;
        unsafe { $crate::gpu::asm!("ld.shared.f32 {0}, [{1}];", out(reg32) v, in(reg32) at, options(nostack, readonly)) };
        v
    }},
}

/// `shared_tile!(tile, ROWS, COLS)` declares the block's static tile (once, at the top of the
/// kernel) and gives a [`SharedTile`] to read and write it.
pub macro shared_tile($name:ident, $rows:expr, $cols:expr) {{
    let base: u32;
    unsafe {
        asm!(
            concat!(".shared .align 4 .b8 ", stringify!($name), "[{bytes}];\n\tmov.u32 {base}, ", stringify!($name), ";"),
            bytes = const ($rows) * ($cols) * 4,
            base = out(reg32) base,
            options(nostack, nomem)
        )
    };
    SharedTile { base, cols: $cols }
}}
