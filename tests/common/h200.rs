//! What the H200 measured for every kernel of the four founding lessons in kernels/, read from
//! docs/figures.tsv (one row per figure: kernel, field, value, card, date, command). Over the
//! contract's 100 launches. tests/lesson_content.rs checks that every kernel in kernels/ has
//! its figures there and that each lesson.toml agrees with them.

use super::figures::{Figure, figures};
use haloscope::report::Verdict;
use std::sync::OnceLock;

pub struct H200 {
    pub kernel: &'static str,
    /// The verdict of `haloscope run --backend gpu`.
    pub verdict: Verdict,
    pub sectors: u64,
    pub loads: u64,
    pub stores: u64,
    pub ideal: u64,
}

/// Every kernel with a full set of H200 figures (verdict, sectors, loads, stores, ideal).
fn all() -> &'static [H200] {
    static ALL: OnceLock<Vec<H200>> = OnceLock::new();
    ALL.get_or_init(|| {
        let on_h200: Vec<&Figure> = figures().iter().filter(|f| f.card == "H200").collect();
        let mut kernels: Vec<&str> = on_h200.iter().map(|f| f.kernel.as_str()).collect();
        kernels.sort();
        kernels.dedup();
        kernels
            .into_iter()
            .filter_map(|kernel| {
                let get = |field: &str| on_h200.iter().find(|f| f.kernel == kernel && f.field == field);
                let number = |field: &str| get(field).map(|f| f.number());
                Some(H200 {
                    kernel: Box::leak(kernel.to_string().into_boxed_str()),
                    verdict: Verdict::parse(&get("verdict")?.value)
                        .unwrap_or_else(|| panic!("{kernel}: not a verdict in docs/figures.tsv")),
                    sectors: number("sectors")?,
                    loads: number("loads")?,
                    stores: number("stores")?,
                    ideal: number("ideal")?,
                })
            })
            .collect()
    })
}

/// The CUDA kernels' figures.
pub fn cuda() -> Vec<&'static H200> {
    all().iter().filter(|h| h.kernel.ends_with(".cu")).collect()
}

/// The Rust kernels' figures.
pub fn rust() -> Vec<&'static H200> {
    all().iter().filter(|h| h.kernel.ends_with(".rs")).collect()
}

impl H200 {
    /// The lesson id: the kernel's directory.
    pub fn lesson(&self) -> &'static str {
        self.kernel.split('/').nth(1).unwrap()
    }

    pub fn find(kernel: &str) -> &'static H200 {
        all()
            .iter()
            .find(|h| h.kernel == kernel)
            .unwrap_or_else(|| panic!("no H200 figures for {kernel} in docs/figures.tsv"))
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
