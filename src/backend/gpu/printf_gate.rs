//! Device `printf` on the GPU, kept to what a Run can wait for. A printf in every thread of a
//! 4096^2 launch is 16.8 million calls; measured on the H200 (docs/archive/measurements-log.md), such a
//! kernel did not finish in 40 s even at 1024^2, so the verification launch timed out.
//!
//! The worker therefore launches kernels that call printf from a rewritten PTX, in which
//! every `vprintf` call is gated by a cap the worker sets before each launch (a `.const`
//! variable, read from the constant bank, not global memory):
//! - verification launches: cap = the output cap (4,096). Each thread that reaches a printf
//!   takes a ticket from a global counter (`atom.global.add`) and prints only with a ticket
//!   under the cap; the counter read back afterwards is the number of printf calls, so the
//!   report can say how many were not printed. These launches are checked, not measured.
//! - profiled and timed launches: cap = 0. The ticket is not taken (the atomic is predicated
//!   off: no lane active, no sectors) and nothing prints; the printf's arguments are still
//!   computed because ptxas cannot know the cap, so the loads, and the sector count, stay the
//!   hardware's for the kernel as written (printf itself adds no global sectors: measured).

/// The `.const` cap: how many printf calls of a launch may print (0: none, and no ticket).
pub const CAP_SYMBOL: &str = "__haloscope_printf_cap";
/// The `.global` ticket counter: printf calls made in the launch (reset before each one).
pub const CALLS_SYMBOL: &str = "__haloscope_printf_calls";

/// The cap for verification launches: the output cap, so the printed panel is as full on the
/// GPU as on the emulator.
pub const VERIFY_CAP: u32 = crate::report::output::MAX_LINES as u32;

/// The PTX with every `vprintf` call gated, or `None` when the kernel never calls printf.
pub fn gate_printf(ptx: &str) -> Option<String> {
    let calls = vprintf_calls(ptx);
    if calls.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(ptx.len() + calls.len() * 400 + 200);
    let mut at = 0;
    let declared = declaration_point(ptx)?;
    for (start, end) in calls {
        if at <= declared && declared <= start {
            out.push_str(&ptx[at..declared]);
            out.push_str(&format!(
                "\n// haloscope: printf gate, set and read by the GPU worker around each launch\n\
                 .const .align 4 .u32 {CAP_SYMBOL};\n.global .align 4 .u32 {CALLS_SYMBOL};\n"
            ));
            at = declared;
        }
        out.push_str(&ptx[at..start]);
        out.push_str(GATE_PROLOGUE);
        // `call.uni` promises a warp-uniform call; a predicated call is not one.
        let call = &ptx[start..end];
        let call = call.replacen("call.uni", "call", 1);
        out.push_str("@%hs_print ");
        out.push_str(&call);
        out.push_str("\n\t} // haloscope printf gate\n");
        at = end;
    }
    out.push_str(&ptx[at..]);
    Some(out)
}

/// The predicate `%hs_print`: the cap is on and this call's ticket is under it. A nested
/// scope, so the registers never clash with the kernel's and may repeat for every call.
const GATE_PROLOGUE: &str = "{ // haloscope printf gate
\t.reg .pred %hs_on, %hs_print;
\t.reg .b32 %hs_<2>;
\tld.const.u32 %hs_0, [__haloscope_printf_cap];
\tsetp.ne.u32 %hs_on, %hs_0, 0;
\tmov.u32 %hs_1, 0xFFFFFFFF;
\t@%hs_on atom.global.add.u32 %hs_1, [__haloscope_printf_calls], 1;
\tsetp.lt.u32 %hs_print, %hs_1, %hs_0;
\t";

/// Where a module-scope declaration may go: after the `.address_size` line (or `.target`).
fn declaration_point(ptx: &str) -> Option<usize> {
    [".address_size", ".target"].iter().find_map(|directive| {
        let at = ptx.find(directive)?;
        Some(ptx[at..].find('\n').map_or(ptx.len(), |nl| at + nl + 1))
    })
}

/// Byte ranges of the `call` statements whose callee is `vprintf`, from `call` through `;`.
fn vprintf_calls(ptx: &str) -> Vec<(usize, usize)> {
    let mut calls = Vec::new();
    let mut from = 0;
    while let Some(found) = ptx[from..].find("call") {
        let start = from + found;
        from = start + 4;
        if !starts_token(ptx, start) {
            continue;
        }
        let Some(len) = ptx[start..].find(';') else { break };
        let statement = &ptx[start..start + len + 1];
        if callee(statement) == Some("vprintf") {
            calls.push((start, start + len + 1));
            from = start + len + 1;
        }
    }
    calls
}

/// True when `at` begins a statement word: at the start of a line or after whitespace, `{`
/// or a predicate guard.
fn starts_token(ptx: &str, at: usize) -> bool {
    ptx[..at]
        .chars()
        .next_back()
        .is_none_or(|c| c.is_whitespace() || c == '{' || c == ';')
}

/// The called function's name in `call[.uni] [(ret),] name, (args);`.
fn callee(statement: &str) -> Option<&str> {
    let rest = statement.strip_prefix("call")?;
    let rest = rest.strip_prefix(".uni").unwrap_or(rest).trim_start();
    let rest = if rest.starts_with('(') {
        rest[rest.find(')')? + 1..].trim_start().strip_prefix(',')?.trim_start()
    } else {
        rest
    };
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))?;
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//
.version 9.0
.target sm_90
.address_size 64

.extern .func  (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0,
\t.param .b64 vprintf_param_1
)
;
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t{ // callseq 0, 0
\t.param .b64 param0;
\tst.param.b64 \t[param0+0], %rd10;
\t.param .b64 param1;
\tst.param.b64 \t[param1+0], %rd7;
\t.param .b32 retval0;
\tcall.uni (retval0), 
\tvprintf, 
\t(
\tparam0, 
\tparam1
\t);
\tld.param.b32 \t%r11, [retval0+0];
\t} // callseq 0
\tcall.uni helper, (param0);
\tret;
}
";

    #[test]
    fn finds_only_the_vprintf_calls() {
        let calls = vprintf_calls(PTX);
        assert_eq!(calls.len(), 1);
        assert!(PTX[calls[0].0..calls[0].1].ends_with(");"));
        assert_eq!(callee("call.uni helper, (param0);"), Some("helper"));
        assert_eq!(callee("call (retval0), vprintf, (param0, param1);"), Some("vprintf"));
        assert_eq!(
            callee("call.uni (retval0), \n\tvprintf, \n\t(\n\tparam0\n\t);"),
            Some("vprintf")
        );
    }

    #[test]
    fn gates_the_call_and_declares_the_limit_once() {
        let gated = gate_printf(PTX).expect("calls printf");
        assert_eq!(gated.matches(&format!(".const .align 4 .u32 {CAP_SYMBOL};")).count(), 1);
        assert_eq!(
            gated.matches(&format!(".global .align 4 .u32 {CALLS_SYMBOL};")).count(),
            1
        );
        assert!(gated.contains("@%hs_print call (retval0)"));
        assert!(!gated.contains("call.uni (retval0)"));
        // The helper call is left as it was; the declaration comes before the first function.
        assert!(gated.contains("call.uni helper, (param0);"));
        assert!(gated.find(CAP_SYMBOL).unwrap() < gated.find(".extern .func").unwrap());
        // Braces stay balanced.
        assert_eq!(gated.matches('{').count(), gated.matches('}').count());
    }

    #[test]
    fn leaves_kernels_without_printf_alone() {
        assert!(gate_printf(&PTX.replace("vprintf", "other")).is_none());
    }
}
