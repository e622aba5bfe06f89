//! Decoding of the asynchronous copies and what completes them (`cp.async`, `cp.async.bulk`,
//! `mbarrier`) and of the cluster instructions (`mapa`, `barrier.cluster`).
//!
//! Only the forms whose meaning the emulator models exactly are accepted; the rest (the
//! tensor-map bulk copies, `.multicast::cluster`, copies from shared memory back to global,
//! `L2::cache_hint`) stay unsupported with their modifier named.

use super::{Decoder, name_of};
use crate::ir::*;
use crate::ptx::ast::{self, Operand};

/// The space an mbarrier or copy operand's modifiers name (`.shared`, `.shared::cta`: the
/// block's own; `.shared::cluster`: any block of the cluster).
fn shared_space(mods: &[&str]) -> Option<MemSpace> {
    mods.iter().find_map(|m| match *m {
        "shared" | "shared::cta" => Some(MemSpace::Shared),
        "shared::cluster" => Some(MemSpace::SharedCluster),
        _ => None,
    })
}

/// Rejects modifiers outside `allowed` (and the type names), naming the first.
fn only(mods: &[&str], allowed: &[&str]) -> Result<(), String> {
    match mods.iter().find(|m| !allowed.contains(m)) {
        Some(m) => Err(format!("modifier `.{m}` is not supported")),
        None => Ok(()),
    }
}

impl Decoder {
    /// An address operand of an async instruction: a register or a shared symbol.
    fn async_addr(&self, op: &Operand) -> Result<Addr, String> {
        Ok(self.addr(op)?.0)
    }

    /// `cp.async...`: per-thread copies, their groups, and the bulk copy.
    pub(super) fn cp_async(&self, i: &ast::Instruction, mods: &[&str]) -> Result<AsyncOp, String> {
        let has = |m: &str| mods.contains(&m);
        if mods.first() != Some(&"async") {
            return Err("only `cp.async` copies are supported".into());
        }
        let rest = &mods[1..];
        if has("bulk") {
            return self.cp_async_bulk(i, &rest[1..]);
        }
        match rest.first().copied() {
            Some("commit_group") => {
                only(rest, &["commit_group"])?;
                self.operands(i, 0)?;
                Ok(AsyncOp::Commit)
            }
            Some("wait_group") => {
                only(rest, &["wait_group"])?;
                let o = self.operands(i, 1)?;
                match o[0] {
                    Operand::Int(n) if n >= 0 => Ok(AsyncOp::Wait {
                        keep: n as u32,
                        all: false,
                    }),
                    _ => Err("cp.async.wait_group takes a constant group count".into()),
                }
            }
            Some("wait_all") => {
                only(rest, &["wait_all"])?;
                self.operands(i, 0)?;
                Ok(AsyncOp::Wait { keep: 0, all: true })
            }
            Some("mbarrier") => {
                only(rest, &["mbarrier", "arrive", "noinc", "shared", "shared::cta", "b64"])?;
                let o = self.operands(i, 1)?;
                Ok(AsyncOp::CopyArrive {
                    mbar: self.async_addr(&o[0])?,
                    noinc: has("noinc"),
                })
            }
            Some("ca") | Some("cg") => {
                only(
                    rest,
                    &[
                        "ca",
                        "cg",
                        "shared",
                        "shared::cta",
                        "global",
                        "L2::64B",
                        "L2::128B",
                        "L2::256B",
                    ],
                )?;
                if !(3..=4).contains(&i.operands.len()) {
                    return Err(format!("expected 3 or 4 operands, found {}", i.operands.len()));
                }
                let o = &i.operands;
                let bytes = match o[2] {
                    Operand::Int(n @ (4 | 8 | 16)) => n as u8,
                    _ => return Err("cp.async copies 4, 8 or 16 bytes".into()),
                };
                if has("cg") && bytes != 16 {
                    return Err("cp.async.cg copies 16 bytes".into());
                }
                Ok(AsyncOp::Copy {
                    dst: self.async_addr(&o[0])?,
                    src: self.async_addr(&o[1])?,
                    bytes,
                    src_size: o.get(3).map(|s| self.src(s, 32, false)).transpose()?,
                })
            }
            _ => Err("this form of cp.async is not supported by the emulator".into()),
        }
    }

    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size,
    /// [mbar]`: the global-to-shared bulk copy the Tensor Memory Accelerator makes.
    fn cp_async_bulk(&self, i: &ast::Instruction, rest: &[&str]) -> Result<AsyncOp, String> {
        if rest.contains(&"tensor") {
            return Err("tensor-map bulk copies (cp.async.bulk.tensor) are not supported".into());
        }
        let into_shared = matches!(rest.first(), Some(&"shared::cluster") | Some(&"shared::cta"));
        if !into_shared || rest.get(1) != Some(&"global") {
            return Err("only bulk copies from global into shared memory are supported".into());
        }
        only(
            rest,
            &[
                "shared::cluster",
                "shared::cta",
                "global",
                "mbarrier::complete_tx::bytes",
            ],
        )?;
        if !rest.contains(&"mbarrier::complete_tx::bytes") {
            return Err("a bulk copy into shared memory completes through an mbarrier".into());
        }
        let o = self.operands(i, 4)?;
        Ok(AsyncOp::Bulk {
            dst: self.async_addr(&o[0])?,
            src: self.async_addr(&o[1])?,
            size: self.src(&o[2], 32, false)?,
            mbar: self.async_addr(&o[3])?,
        })
    }

    /// The `mbarrier` instructions; the waits are control flow ([`Flow::MbarWait`]).
    pub(super) fn mbarrier(&self, i: &ast::Instruction, mods: &[&str]) -> Result<Kind, String> {
        let has = |m: &str| mods.contains(&m);
        let ordering = [
            "release",
            "acquire",
            "relaxed",
            "cta",
            "cluster",
            "b64",
            "shared",
            "shared::cta",
        ];
        let space = shared_space(mods).unwrap_or(MemSpace::Generic);
        match mods.first().copied() {
            Some("init") => {
                only(&mods[1..], &["shared", "shared::cta", "b64"])?;
                let o = self.operands(i, 2)?;
                Ok(Kind::from(Work::Async(AsyncOp::MbarInit {
                    addr: self.async_addr(&o[0])?,
                    count: self.src(&o[1], 32, false)?,
                })))
            }
            Some("inval") => {
                only(&mods[1..], &["shared", "shared::cta", "b64"])?;
                let o = self.operands(i, 1)?;
                Ok(Kind::from(Work::Async(AsyncOp::MbarInval {
                    addr: self.async_addr(&o[0])?,
                })))
            }
            Some("arrive") | Some("arrive_drop") => {
                let mut allowed = vec!["expect_tx", "noComplete", "shared::cluster"];
                allowed.extend(ordering);
                only(&mods[1..], &allowed)?;
                if has("noComplete") {
                    return Err("mbarrier.arrive.noComplete is not supported".into());
                }
                let o = &i.operands;
                let expect_tx = has("expect_tx");
                if !(2..=3).contains(&o.len()) || (expect_tx && o.len() != 3) {
                    return Err(format!("unexpected operands for mbarrier.arrive: {}", o.len()));
                }
                let state = match &o[0] {
                    Operand::Name(n) if n == "_" => None,
                    other => Some(self.dst(other)?),
                };
                let third = o.get(2).map(|c| self.src(c, 32, false)).transpose()?;
                let (count, tx) = if expect_tx { (None, third) } else { (third, None) };
                Ok(Kind::from(Work::Async(AsyncOp::MbarArrive {
                    state,
                    addr: self.async_addr(&o[1])?,
                    count,
                    tx,
                    drop: mods[0] == "arrive_drop",
                    space,
                })))
            }
            Some("expect_tx") | Some("complete_tx") => {
                let mut allowed = vec!["shared::cluster"];
                allowed.extend(ordering);
                only(&mods[1..], &allowed)?;
                let o = self.operands(i, 2)?;
                Ok(Kind::from(Work::Async(AsyncOp::MbarTx {
                    addr: self.async_addr(&o[0])?,
                    tx: self.src(&o[1], 32, false)?,
                    complete: mods[0] == "complete_tx",
                    space,
                })))
            }
            Some("pending_count") => {
                only(&mods[1..], &["b64"])?;
                let o = self.operands(i, 2)?;
                Ok(Kind::from(Work::Async(AsyncOp::MbarPending {
                    d: self.dst(&o[0])?,
                    state: self.src(&o[1], 64, false)?,
                })))
            }
            Some("test_wait") | Some("try_wait") => {
                let mut allowed = vec!["parity"];
                allowed.extend(ordering);
                only(&mods[1..], &allowed)?;
                let o = &i.operands;
                if !(3..=4).contains(&o.len()) {
                    return Err(format!("unexpected operands for an mbarrier wait: {}", o.len()));
                }
                // A fourth operand of try_wait is a time limit hint: the emulator waits as
                // long as it takes.
                let phase = if has("parity") {
                    MbarPhase::Parity(self.src(&o[2], 32, false)?)
                } else {
                    MbarPhase::State(self.src(&o[2], 64, false)?)
                };
                Ok(Kind::from(Flow::MbarWait {
                    d: self.pred(name_of(&o[0])?)?,
                    addr: self.async_addr(&o[1])?,
                    phase,
                }))
            }
            _ => Err("this form of mbarrier is not supported by the emulator".into()),
        }
    }

    /// `mapa{.shared::cluster}.u32/.u64 d, a, rank`: the address `a` would have in block
    /// `rank` of the cluster (generic without `.shared::cluster`).
    pub(super) fn mapa(&self, i: &ast::Instruction, mods: &[&str]) -> Result<Kind, String> {
        only(mods, &["shared::cluster", "u32", "u64"])?;
        let generic = !mods.contains(&"shared::cluster");
        let bits = if mods.contains(&"u64") { 64 } else { 32 };
        let o = self.operands(i, 3)?;
        Ok(Kind::from(Work::Mapa {
            d: self.dst(&o[0])?,
            a: self.src(&o[1], bits, false)?,
            rank: self.src(&o[2], 32, false)?,
            generic,
        }))
    }

    /// `barrier.cluster.arrive{.release|.relaxed}{.aligned}` and
    /// `barrier.cluster.wait{.acquire}{.aligned}`.
    pub(super) fn cluster_barrier(&self, i: &ast::Instruction, mods: &[&str]) -> Result<Kind, String> {
        self.operands(i, 0)?;
        match mods.get(1).copied() {
            Some("arrive") => {
                only(&mods[2..], &["release", "relaxed", "aligned"])?;
                Ok(Flow::ClusterArrive.into())
            }
            Some("wait") => {
                only(&mods[2..], &["acquire", "aligned"])?;
                Ok(Flow::ClusterWait.into())
            }
            _ => Err("barrier.cluster needs .arrive or .wait".into()),
        }
    }
}
