//! Who may read the GPU's performance counters. Since driver 418 the NVIDIA driver lets
//! only administrators profile, by default (`RmProfilingAdminOnly: 1` in
//! /proc/driver/nvidia/params); CUPTI then refuses the profiler's calls with
//! `CUPTI_ERROR_INSUFFICIENT_PRIVILEGES` while launches and events still work. A learner's
//! workstation is usually set up so: the GPU still checks every element and times the
//! kernel, and the emulator counts the sectors (the same figures on the lessons' kernels).

use cudarc::cupti::sys::CUptiResult;

/// `<CUPTI call>=<status name>` (or `*=<status>` for every call): the status that call
/// returns instead of its own. Only statuses named in [`INJECTABLE`] are accepted.
pub const INJECT_ENV: &str = "HALOSCOPE_INJECT_CUPTI_STATUS";

/// The statuses a test may inject: CUPTI's own values, by the names its header gives them.
const INJECTABLE: [(&str, CUptiResult); 3] = [
    (
        "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        CUptiResult::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
    ),
    (
        "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES",
        CUptiResult::CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES,
    ),
    ("CUPTI_ERROR_NOT_SUPPORTED", CUptiResult::CUPTI_ERROR_NOT_SUPPORTED),
];

/// The status [`INJECT_ENV`] puts in place of `call`'s, if it names this call.
pub fn injected_status(call: &str) -> Option<CUptiResult> {
    parse_injection(&std::env::var(INJECT_ENV).ok()?, call)
}

pub(super) fn parse_injection(spec: &str, call: &str) -> Option<CUptiResult> {
    let (target, status) = spec.split_once('=')?;
    if target.trim() != call && target.trim() != "*" {
        return None;
    }
    INJECTABLE
        .iter()
        .find(|(name, _)| *name == status.trim())
        .map(|(_, value)| *value)
}

/// Whether CUPTI refused for want of privileges (on the host, or a hypervisor's).
pub fn is_privilege_refusal(status: CUptiResult) -> bool {
    matches!(
        status,
        CUptiResult::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
            | CUptiResult::CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES
    )
}

/// The two ways to let a user read the counters, for the app, the CLI and `doctor`.
pub const HOW_TO_ALLOW: &str = "To let haloscope read the GPU's own counters, either allow profiling for every user \
(as root: `echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' > /etc/modprobe.d/nvidia-profiling.conf`, \
then `update-initramfs -u` and reboot), or run haloscope with the CAP_SYS_ADMIN capability \
(`sudo setcap cap_sys_admin+ep $(command -v haloscope)`, or through sudo). \
Windows: NVIDIA Control Panel > Developer > Manage GPU Performance Counters > Allow access to all users.";

/// What the run says when CUPTI refused `call` with `text`.
pub fn restricted_message(call: &str, text: &str) -> String {
    format!(
        "this user may not read the GPU's performance counters (CUPTI {call}: {text}); \
         the driver allows profiling to administrators only"
    )
}

/// The driver's setting, where the driver says (Linux): `Some(true)` when profiling is for
/// administrators only.
pub fn admin_only_by_driver() -> Option<bool> {
    let params = std::fs::read_to_string("/proc/driver/nvidia/params").ok()?;
    admin_only_in(&params)
}

fn admin_only_in(params: &str) -> Option<bool> {
    params
        .lines()
        .find_map(|l| l.strip_prefix("RmProfilingAdminOnly:"))
        .map(|v| v.trim() != "0")
}

/// Whether this process may profile anyway: root, or CAP_SYS_ADMIN in its effective set.
pub fn may_profile_as_admin() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| effective_caps_have_sys_admin(&status))
        .unwrap_or(false)
}

fn effective_caps_have_sys_admin(status: &str) -> Option<bool> {
    const CAP_SYS_ADMIN: u32 = 21;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim();
    let caps = u64::from_str_radix(hex, 16).ok()?;
    Some(caps & (1 << CAP_SYS_ADMIN) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_injection_names_one_call_or_all() {
        let spec = "cuptiProfilerInitialize=CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
        assert_eq!(
            parse_injection(spec, "cuptiProfilerInitialize"),
            Some(CUptiResult::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        );
        assert_eq!(parse_injection(spec, "cuptiSassMetricsEnable"), None);
        assert!(parse_injection("*=CUPTI_ERROR_NOT_SUPPORTED", "cuptiSassMetricsEnable").is_some());
        assert_eq!(parse_injection("*=CUPTI_ERROR_MADE_UP", "x"), None);
    }

    #[test]
    fn the_refusals_are_the_privilege_statuses_and_no_other() {
        assert!(is_privilege_refusal(CUptiResult::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES));
        assert!(is_privilege_refusal(
            CUptiResult::CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES
        ));
        assert!(!is_privilege_refusal(CUptiResult::CUPTI_ERROR_NOT_SUPPORTED));
        // CUPTI's numbers for them (cupti_result.h): what a user's report would quote.
        assert_eq!(CUptiResult::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES as u32, 35);
    }

    #[test]
    fn the_driver_setting_and_the_capability_are_read_from_proc() {
        let params = "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nEnableMSI: 1\n";
        assert_eq!(admin_only_in(params), Some(true));
        assert_eq!(admin_only_in("RmProfilingAdminOnly: 0\n"), Some(false));
        assert_eq!(admin_only_in("EnableMSI: 1\n"), None);
        // root's full set, and an ordinary user's empty one.
        assert_eq!(effective_caps_have_sys_admin("CapEff:\t000001ffffffffff\n"), Some(true));
        assert_eq!(
            effective_caps_have_sys_admin("CapEff:\t0000000000000000\n"),
            Some(false)
        );
    }
}
