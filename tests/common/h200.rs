//! What the H200 measured for every kernel in kernels/ (docs/measurements.md: call 2 for the
//! CUDA kernels' sectors and verdicts, call 3 for their loads, stores and ideal sectors,
//! call 6 for the Rust kernels; the per-kernel lines are in docs/device-runs/). Over the
//! contract's 100 launches. tests/lesson_content.rs checks each row against those files.

use haloscope::report::Verdict;

pub struct H200 {
    pub kernel: &'static str,
    /// The verdict of `haloscope run --backend gpu`.
    pub verdict: Verdict,
    pub sectors: u64,
    pub loads: u64,
    pub stores: u64,
    pub ideal: u64,
}

const fn k(kernel: &'static str, verdict: Verdict, sectors: u64, loads: u64, stores: u64, ideal: u64) -> H200 {
    H200 {
        kernel,
        verdict,
        sectors,
        loads,
        stores,
        ideal,
    }
}

pub const CUDA: &[H200] = &[
    k(
        "kernels/stencil-1d/no_barrier.cu",
        Verdict::WrongResults,
        432_537_600,
        222_822_200,
        209_715_400,
        432_537_600,
    ),
    k(
        "kernels/stencil-1d/no_halo.cu",
        Verdict::WrongResults,
        419_430_600,
        209_715_200,
        209_715_400,
        419_430_600,
    ),
    k(
        "kernels/stencil-1d/solution.cu",
        Verdict::Pass,
        432_537_600,
        222_822_200,
        209_715_400,
        432_537_600,
    ),
    k(
        "kernels/stencil-1d/starter.cu",
        Verdict::GateFail,
        943_718_400,
        734_003_000,
        209_715_400,
        838_861_000,
    ),
    k(
        "kernels/stencil-2d/solution.cu",
        Verdict::Pass,
        576_614_000,
        366_080_000,
        210_534_000,
        576_614_000,
    ),
    k(
        "kernels/stencil-2d/starter.cu",
        Verdict::GateFail,
        1_362_688_000,
        1_152_154_000,
        210_534_000,
        1_258_700_400,
    ),
    k(
        "kernels/stencil-2d/x_only.cu",
        Verdict::GateFail,
        943_513_200,
        732_979_200,
        210_534_000,
        943_513_200,
    ),
    k(
        "kernels/stencil-3d/hardcoded_depth.cu",
        Verdict::WrongResults,
        946_566_400,
        737_670_400,
        208_896_000,
        946_566_400,
    ),
    k(
        "kernels/stencil-3d/solution.cu",
        Verdict::Pass,
        948_659_200,
        738_944_000,
        209_715_200,
        948_659_200,
    ),
    k(
        "kernels/stencil-3d/starter.cu",
        Verdict::GateFail,
        1_748_460_000,
        1_538_744_800,
        209_715_200,
        1_658_137_600,
    ),
    k(
        "kernels/stencil-3d-registers/no_rotation.cu",
        Verdict::WrongResults,
        539_033_600,
        329_318_400,
        209_715_200,
        539_033_600,
    ),
    k(
        "kernels/stencil-3d-registers/one_barrier.cu",
        Verdict::WrongResults,
        539_033_600,
        329_318_400,
        209_715_200,
        539_033_600,
    ),
    k(
        "kernels/stencil-3d-registers/solution.cu",
        Verdict::Pass,
        539_033_600,
        329_318_400,
        209_715_200,
        539_033_600,
    ),
    k(
        "kernels/stencil-3d-registers/starter.cu",
        Verdict::GateFail,
        948_659_200,
        738_944_000,
        209_715_200,
        948_659_200,
    ),
];

pub const RUST: &[H200] = &[
    k(
        "kernels/stencil-1d/solution.rs",
        Verdict::Pass,
        432_537_600,
        222_822_200,
        209_715_400,
        432_537_600,
    ),
    k(
        "kernels/stencil-1d/starter.rs",
        Verdict::GateFail,
        943_718_400,
        734_003_000,
        209_715_400,
        838_861_000,
    ),
    k(
        "kernels/stencil-2d/solution.rs",
        Verdict::Pass,
        576_614_000,
        366_080_000,
        210_534_000,
        576_614_000,
    ),
    k(
        "kernels/stencil-2d/starter.rs",
        Verdict::GateFail,
        1_363_506_800,
        1_152_972_800,
        210_534_000,
        1_259_519_200,
    ),
    k(
        "kernels/stencil-3d/solution.rs",
        Verdict::Pass,
        948_659_200,
        738_944_000,
        209_715_200,
        948_659_200,
    ),
    k(
        "kernels/stencil-3d/starter.rs",
        Verdict::GateFail,
        1_748_460_000,
        1_538_744_800,
        209_715_200,
        1_658_137_600,
    ),
    k(
        "kernels/stencil-3d-registers/solution.rs",
        Verdict::Pass,
        539_033_600,
        329_318_400,
        209_715_200,
        539_033_600,
    ),
    k(
        "kernels/stencil-3d-registers/starter.rs",
        Verdict::GateFail,
        948_659_200,
        738_944_000,
        209_715_200,
        948_659_200,
    ),
];

impl H200 {
    /// The lesson id: the kernel's directory.
    pub fn lesson(&self) -> &'static str {
        self.kernel.split('/').nth(1).unwrap()
    }

    pub fn find(kernel: &str) -> &'static H200 {
        CUDA.iter()
            .chain(RUST)
            .find(|h| h.kernel == kernel)
            .unwrap_or_else(|| panic!("no H200 figures for {kernel}"))
    }

    /// (field as docs/known-differences.md names it, H200 value).
    pub fn fields(&self) -> [(&'static str, u64); 4] {
        [
            ("sectors", self.sectors),
            ("loads", self.loads),
            ("stores", self.stores),
            ("ideal", self.ideal),
        ]
    }
}
