//! docs/figures.tsv: every figure the tests and the lesson texts check, one per row, with the
//! card, the date and the command that measured it.

use std::sync::OnceLock;

pub struct Figure {
    /// A kernel's path (`kernels/stencil-2d/starter.cu`), or a name for a figure of the card
    /// or of a probe (`card:copy`).
    pub kernel: String,
    /// What was measured: verdict, sectors, loads, stores, ideal, median_us, ...
    pub field: String,
    pub value: String,
    /// H200, H100, or `emulator` for a kernel not yet measured on a card.
    pub card: String,
    pub date: String,
    pub command: String,
}

impl Figure {
    /// The value as a lesson text shows it: a whole number with thousands separators.
    pub fn number_text(&self) -> String {
        match self.value.parse::<u64>() {
            Ok(n) => haloscope::report::thousands(n),
            Err(_) => self.value.clone(),
        }
    }

    pub fn number(&self) -> u64 {
        self.value
            .parse()
            .unwrap_or_else(|_| panic!("{} {}: `{}` is not a whole number", self.kernel, self.field, self.value))
    }
}

/// The rows of docs/figures.tsv (comments and the header skipped).
pub fn figures() -> &'static [Figure] {
    static ROWS: OnceLock<Vec<Figure>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let path = super::root().join("docs/figures.tsv");
        let text = std::fs::read_to_string(&path).unwrap();
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("kernel\t") && !l.trim().is_empty())
            .map(|l| {
                let c: Vec<&str> = l.split('\t').collect();
                assert_eq!(c.len(), 6, "docs/figures.tsv: six columns in `{l}`");
                Figure {
                    kernel: c[0].into(),
                    field: c[1].into(),
                    value: c[2].into(),
                    card: c[3].into(),
                    date: c[4].into(),
                    command: c[5].into(),
                }
            })
            .collect()
    })
}

/// The figure `field` of `kernel`, measured on `card`.
pub fn figure(kernel: &str, field: &str, card: &str) -> Option<&'static Figure> {
    figures()
        .iter()
        .find(|f| f.kernel == kernel && f.field == field && f.card == card)
}
