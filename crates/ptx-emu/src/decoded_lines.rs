//! The decoder's answer, per line of PTX text, to what tools outside the emulator ask of an
//! instruction: does it issue global sectors, is it a branch and to where, does it end the
//! thread. The compiler view and the machine-code checks ask here instead of reading the
//! PTX text again, so one decoder decides what counts as a global access.

use crate::decode::decode_entry;
use crate::ir::{AccessKind, CopyKind, Flow, Kind, MemSpace};
use crate::ptx::{PtxError, parse_module};
use std::collections::BTreeMap;

/// How an instruction moves the thread on, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// `bra`: to the instruction on this PTX line.
    Branch { target_ptx_line: u32 },
    /// `ret` or `exit`.
    Exit,
}

/// One PTX line's instruction as the decoder made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodedLine {
    /// The `.loc` line (for code inlined from a header, the learner's call) and its file.
    pub line: u32,
    pub file: u32,
    /// A load, store or atomic in global (or generic) space, or a per-thread asynchronous
    /// copy's global read: what the sector metric counts. (A bulk copy's bytes are moved by
    /// the copy engine and the metric does not see them: not counted.)
    pub counted: Option<AccessKind>,
    /// ptxas makes a global or generic memory instruction of it (LDG/STG/LD/ST/ATOM/RED,
    /// LDGSTS): the counted accesses above and the `.shared::cluster` ones, which sm_90
    /// reaches through generic LD/ST (the metric sees no global sectors from them). What the
    /// compiler view compares with the SASS's global memory instructions.
    pub machine_global: bool,
    pub copy: Option<CopyKind>,
    pub control: Option<Control>,
    /// Under a predicate (`@%p bra`).
    pub guarded: bool,
}

impl DecodedLine {
    /// A counted global load (not a store, atomic or reduction).
    pub fn is_global_load(&self) -> bool {
        self.counted == Some(AccessKind::Load)
    }
}

/// Every instruction of every kernel (`.entry`) in `ptx`, by its PTX line. A device function
/// a kernel calls is inlined into it, so its lines are here too.
pub fn decoded_lines(ptx: &str) -> Result<BTreeMap<u32, DecodedLine>, PtxError> {
    let module = parse_module(ptx)?;
    let mut lines = BTreeMap::new();
    for entry in module.functions.iter().filter(|f| f.is_entry) {
        let program = decode_entry(&module, &entry.name)?;
        for inst in &program.insts {
            let control = match &inst.kind {
                Kind::Flow(Flow::Bra { target }) => program.insts.get(*target as usize).map(|t| Control::Branch {
                    target_ptx_line: t.ptx_line,
                }),
                Kind::Flow(Flow::Exit) => Some(Control::Exit),
                _ => None,
            };
            let copy = inst.copy();
            let counted = inst
                .access()
                .map(|(kind, _)| kind)
                .filter(|_| inst.is_global_access() && copy != Some(CopyKind::Bulk));
            let cluster_shared = matches!(inst.access(), Some((_, MemSpace::SharedCluster)));
            lines.insert(
                inst.ptx_line,
                DecodedLine {
                    line: inst.line,
                    file: inst.file,
                    counted,
                    machine_global: counted.is_some() || cluster_shared,
                    copy,
                    control,
                    guarded: inst.guard.is_some(),
                },
            );
        }
    }
    Ok(lines)
}
