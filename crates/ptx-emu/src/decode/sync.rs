//! Decoding of block barriers and warp-level instructions: `bar`/`barrier`, `bar.warp.sync`,
//! `shfl.sync`, `vote`, `match.sync`, `activemask`, `redux.sync`.

use super::{Decoder, name_of};
use crate::ir::*;
use crate::ptx::ast::{self, Operand};

impl Decoder {
    /// The warp-level instructions: `bar.warp.sync`, `shfl.sync`, `vote`, `match.sync`,
    /// `activemask`, `redux.sync`.
    pub(super) fn warp_level(&self, i: &ast::Instruction, base: &str, mods: &[&str]) -> Result<WarpKind, String> {
        let has = |m: &str| mods.contains(&m);
        match base {
            "bar" | "barrier" if has("warp") => {
                let o = self.operands(i, 1)?;
                Ok(WarpKind::WarpSync {
                    mask: self.src(&o[0], 32, false)?,
                })
            }
            "shfl" => {
                if !has("sync") {
                    return Err("shfl without .sync (removed in sm_70) is not supported".into());
                }
                let mode = if has("up") {
                    ShflMode::Up
                } else if has("down") {
                    ShflMode::Down
                } else if has("bfly") {
                    ShflMode::Bfly
                } else if has("idx") {
                    ShflMode::Idx
                } else {
                    return Err("shfl needs a mode (.up, .down, .bfly or .idx)".into());
                };
                let o = self.operands(i, 5)?;
                let (d, p) = self.value_and_pred(&o[0])?;
                Ok(WarpKind::Shfl {
                    mode,
                    d,
                    p,
                    a: self.src(&o[1], 32, false)?,
                    b: self.src(&o[2], 32, false)?,
                    c: self.src(&o[3], 32, false)?,
                    mask: self.src(&o[4], 32, false)?,
                })
            }
            "vote" => {
                let mode = if has("all") {
                    VoteMode::All
                } else if has("any") {
                    VoteMode::Any
                } else if has("uni") {
                    VoteMode::Uni
                } else if has("ballot") {
                    VoteMode::Ballot
                } else {
                    return Err("vote needs a mode".into());
                };
                // Without .sync (deprecated) the mask is the lanes executing it.
                let count = if has("sync") { 3 } else { 2 };
                let o = self.operands(i, count)?;
                let d = if mode == VoteMode::Ballot {
                    VoteDst::Reg(self.dst(&o[0])?)
                } else {
                    VoteDst::Pred(self.pred(name_of(&o[0])?)?)
                };
                let mask = if has("sync") {
                    self.src(&o[2], 32, false)?
                } else {
                    Src::Imm(u32::MAX as u64)
                };
                Ok(WarpKind::Vote {
                    mode,
                    d,
                    a: self.pred_src(&o[1])?,
                    mask,
                })
            }
            "match" => {
                let all = has("all");
                if !all && !has("any") {
                    return Err("match needs .any or .all".into());
                }
                let bits = if has("b64") { 64 } else { 32 };
                let o = self.operands(i, 3)?;
                let (d, p) = self.value_and_pred(&o[0])?;
                Ok(WarpKind::Match {
                    all,
                    d,
                    p,
                    a: self.src(&o[1], bits, false)?,
                    mask: self.src(&o[2], 32, false)?,
                    bits,
                })
            }
            "activemask" => {
                let o = self.operands(i, 1)?;
                Ok(WarpKind::Activemask { d: self.dst(&o[0])? })
            }
            "redux" => {
                let op = if has("add") {
                    ReduxOp::Add
                } else if has("min") {
                    ReduxOp::Min
                } else if has("max") {
                    ReduxOp::Max
                } else if has("and") {
                    ReduxOp::And
                } else if has("or") {
                    ReduxOp::Or
                } else if has("xor") {
                    ReduxOp::Xor
                } else {
                    return Err("redux needs an operation".into());
                };
                if has("f32") {
                    return Err("redux.sync on f32 (sm_100a) is not supported".into());
                }
                let o = self.operands(i, 3)?;
                Ok(WarpKind::Redux {
                    op,
                    signed: has("s32"),
                    d: self.dst(&o[0])?,
                    a: self.src(&o[1], 32, false)?,
                    mask: self.src(&o[2], 32, false)?,
                })
            }
            _ => Err("this instruction is not supported by the emulator".into()),
        }
    }

    /// `d` or `d|p`.
    fn value_and_pred(&self, op: &Operand) -> Result<(Reg, Option<PReg>), String> {
        match op {
            Operand::PredPair(d, p) => Ok((self.reg(d)?, Some(self.pred(p)?))),
            other => Ok((self.dst(other)?, None)),
        }
    }

    /// `bar{.cta}.sync a{, b}`, `barrier{.cta}.sync{.aligned} a{, b}`, `bar.arrive a, b`,
    /// `bar.red.popc.u32 d, a{, b}, {!}c`, `bar.red.{and,or}.pred p, a{, b}, {!}c`.
    pub(super) fn barrier(&self, i: &ast::Instruction, mods: &[&str]) -> Result<Flow, String> {
        let has = |m: &str| mods.contains(&m);
        for m in mods {
            if !matches!(
                *m,
                "cta" | "sync" | "aligned" | "arrive" | "red" | "popc" | "and" | "or" | "u32" | "pred"
            ) {
                return Err(format!("barrier modifier `.{m}` is not supported"));
            }
        }
        let o = &i.operands;
        if has("red") {
            let op = if has("popc") {
                BarRedOp::Popc
            } else if has("and") {
                BarRedOp::And
            } else if has("or") {
                BarRedOp::Or
            } else {
                return Err("bar.red needs .popc, .and or .or".into());
            };
            if !(3..=4).contains(&o.len()) {
                return Err(format!("expected 3 or 4 operands, found {}", o.len()));
            }
            let d = if op == BarRedOp::Popc {
                VoteDst::Reg(self.dst(&o[0])?)
            } else {
                VoteDst::Pred(self.pred(name_of(&o[0])?)?)
            };
            let count = if o.len() == 4 {
                Some(self.src(&o[2], 32, false)?)
            } else {
                None
            };
            return Ok(Flow::Bar {
                id: self.src(&o[1], 32, false)?,
                count,
                arrive: false,
                red: Some(BarRed {
                    op,
                    p: self.pred_src(&o[o.len() - 1])?,
                    d,
                }),
            });
        }
        let arrive = has("arrive");
        if o.is_empty() || o.len() > 2 || (arrive && o.len() != 2) {
            return Err(format!("unexpected operands for a barrier: {}", o.len()));
        }
        Ok(Flow::Bar {
            id: self.src(&o[0], 32, false)?,
            count: o.get(1).map(|c| self.src(c, 32, false)).transpose()?,
            arrive,
            red: None,
        })
    }
}
