//! What the app remembers between runs (saved as JSON in the data directory): preferences,
//! and per lesson the learner's progress and every attempt with its source.

use crate::backend::BackendChoice;
use crate::report::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Theme {
    #[default]
    Dark,
    Light,
    /// High contrast and thick lines for classroom projectors.
    Projector,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum LessonTab {
    #[default]
    Text,
    Contract,
    Hints,
    Learn,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Prefs {
    pub theme: Theme,
    pub zoom: f32,
    pub backend: BackendChoice,
    pub lesson: Option<String>,
    pub lesson_tab: LessonTab,
    /// The results tab shown: its id in `tabs::TABS` (empty, or an id no tab has: the first).
    pub result_tab: String,
    /// Hints revealed so far, per lesson.
    pub hints_shown: BTreeMap<String, usize>,
    /// The language kernels are written in.
    #[serde(default = "cuda")]
    pub language: crate::lesson::Language,
    /// Soft-wrap long kernel lines (else they scroll sideways).
    #[serde(default = "yes")]
    pub wrap_code: bool,
    /// Count the sectors while the learner types (app/live.rs).
    #[serde(default = "yes")]
    pub live_figures: bool,
}

impl Default for Prefs {
    fn default() -> Prefs {
        Prefs {
            theme: Theme::default(),
            zoom: 1.0,
            backend: BackendChoice::default(),
            lesson: None,
            lesson_tab: LessonTab::default(),
            result_tab: String::new(),
            hints_shown: BTreeMap::new(),
            language: cuda(),
            wrap_code: true,
            live_figures: true,
        }
    }
}

fn yes() -> bool {
    true
}

fn cuda() -> crate::lesson::Language {
    crate::lesson::Language::Cuda
}

/// One press of Run, kept so it can be compared and restored.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Attempt {
    /// Seconds since the Unix epoch.
    pub at: u64,
    pub verdict: Verdict,
    pub sectors: Option<u64>,
    pub median_us: Option<f64>,
    pub backend: String,
    pub source: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct LessonProgress {
    pub passed: bool,
    /// Fewest sectors of a correct attempt.
    pub best_sectors: Option<u64>,
    pub attempts: Vec<Attempt>,
}

impl LessonProgress {
    pub fn record(&mut self, attempt: Attempt) {
        let correct = attempt.verdict.is_correct();
        if attempt.verdict == Verdict::Pass {
            self.passed = true;
        }
        if let (true, Some(s)) = (correct, attempt.sectors) {
            self.best_sectors = Some(self.best_sectors.map_or(s, |b| b.min(s)));
        }
        self.attempts.push(attempt);
    }
}

pub fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
