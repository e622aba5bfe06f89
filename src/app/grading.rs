//! A grading table opened in the app (`haloscope grade`'s grades.json), for walking through
//! a class's answers: the rows (student, verdict, sectors) in a window, and for the picked
//! student the submission, read-only, with its report's verdict, sizes and findings.

use super::action::Action;
use super::jobs::{Job, Jobs};
use super::theme::palette;
use super::view::{View, ViewContext};
use crate::grade::table::{GradeRow, GradeTable, GradeVerdict};
use crate::report::{RunReport, thousands};
use egui::{RichText, Ui};
use std::path::{Path, PathBuf};

pub struct GradingView {
    pub path: PathBuf,
    pub table: GradeTable,
    pub selected: Option<usize>,
    /// The picked student's source and report, read once per pick.
    shown: Option<Submission>,
    /// Reading the picked student's files (a report is a few megabytes of JSON: read off
    /// the frame, through the job service).
    loading: Option<(usize, Job<Submission>)>,
}

/// One student's kernel and report, as read from the table's folders.
struct Submission {
    row: usize,
    source: String,
    report: Option<RunReport>,
}

impl GradingView {
    pub fn open(path: &Path) -> Result<GradingView, String> {
        Ok(GradingView {
            path: path.to_path_buf(),
            table: GradeTable::load(path)?,
            selected: None,
            shown: None,
            loading: None,
        })
    }

    /// Starts reading the picked student's files unless they are shown or being read.
    fn load_selected(&mut self, jobs: &Jobs) {
        let Some(i) = self.selected else { return };
        if self.shown.as_ref().is_some_and(|s| s.row == i) || self.loading.as_ref().is_some_and(|(j, _)| *j == i) {
            return;
        }
        let row = self.table.rows[i].clone();
        let submissions = self.table.submissions.clone();
        let folder = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        // Starting another drops (cancels) the read of an earlier pick.
        let job = jobs.start("grading table", move |_| {
            read_submission(i, &row, &submissions, &folder)
        });
        self.loading = Some((i, job));
    }
}

fn read_submission(row_index: usize, row: &GradeRow, submissions: &Path, folder: &Path) -> Submission {
    let source = if row.file.is_empty() {
        "(no kernel file was handed in)".to_string()
    } else {
        let path = submissions.join(&row.file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| format!("(cannot read {}: {e})", path.display()))
    };
    let report = row
        .report
        .as_ref()
        .and_then(|r| std::fs::read_to_string(folder.join(r)).ok())
        .and_then(|t| serde_json::from_str(&t).ok());
    Submission {
        row: row_index,
        source,
        report,
    }
}

/// The grading window (the app shows it while a table is open); closing it asks the app to
/// drop the table.
impl View for GradingView {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        let pal = palette(cx.prefs.theme);
        let mut open = true;
        let title = format!("Grading: {} ({} submissions)", self.table.lesson, self.table.rows.len());
        egui::Window::new(title)
            .id(egui::Id::unique("grading window"))
            .open(&mut open)
            .default_size([900.0, 620.0])
            .min_height(420.0)
            .show(ui.ctx(), |ui| {
                ui.label(RichText::new(self.path.display().to_string()).small().weak());
                ui.columns(2, |columns| {
                    rows(&mut columns[0], self, &pal);
                    self.load_selected(cx.jobs);
                    submission(&mut columns[1], self, &pal);
                });
            });
        if !open {
            cx.actions.push(Action::CloseGradingTable);
        }
    }

    fn poll(&mut self) {
        if let Some(submission) = self.loading.as_ref().and_then(|(_, job)| job.poll()) {
            self.shown = Some(submission);
            self.loading = None;
        }
    }

    fn busy(&self) -> bool {
        self.loading.is_some()
    }
}

fn rows(ui: &mut Ui, view: &mut GradingView, pal: &super::theme::Palette) {
    egui::ScrollArea::vertical().id_salt("grading rows").show(ui, |ui| {
        egui::Grid::new("grading table")
            .striped(true)
            .num_columns(3)
            .show(ui, |ui| {
                for h in ["student", "verdict", "sectors"] {
                    ui.label(RichText::new(h).strong());
                }
                ui.end_row();
                for (i, row) in view.table.rows.iter().enumerate() {
                    if ui.selectable_label(view.selected == Some(i), &row.student).clicked() {
                        view.selected = Some(i);
                    }
                    let colour = if row.verdict == GradeVerdict::PASS {
                        pal.pass
                    } else {
                        pal.fail
                    };
                    ui.colored_label(colour, row.verdict.as_str());
                    ui.label(row.sectors.map_or("-".into(), thousands));
                    ui.end_row();
                }
            });
    });
}

fn submission(ui: &mut Ui, view: &GradingView, pal: &super::theme::Palette) {
    let Some(i) = view.selected else {
        ui.label("Pick a student to see the submission and its report.");
        return;
    };
    let Some(Submission { source, report, .. }) = view.shown.as_ref().filter(|s| s.row == i) else {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("reading the submission…");
        });
        return;
    };
    let row: &GradeRow = &view.table.rows[i];
    ui.label(RichText::new(format!("{} — {}", row.student, row.file)).strong());
    let colour = if row.verdict == GradeVerdict::PASS {
        pal.pass
    } else {
        pal.fail
    };
    ui.colored_label(colour, format!("{}: {}", row.verdict, row.message));
    ui.label(
        RichText::new(format!(
            "seed {} · {} · haloscope {}",
            row.seed, row.graded_on, row.haloscope_version
        ))
        .small(),
    );
    if let Some(report) = report {
        for size in &report.sizes {
            ui.label(RichText::new(size.summary()).small());
        }
        for f in &report.findings {
            ui.label(RichText::new(f.located()).small().color(pal.fail));
        }
    }
    if let Some(errors) = &row.compile_errors {
        ui.label(RichText::new(errors).small().monospace().color(pal.fail));
    }
    ui.separator();
    // Read-only: a label, not an editor.
    egui::ScrollArea::both().id_salt("grading source").show(ui, |ui| {
        let numbered: String = source
            .lines()
            .enumerate()
            .map(|(n, l)| format!("{:>3}  {l}\n", n + 1))
            .collect();
        ui.add(egui::Label::new(RichText::new(numbered).monospace().size(11.0)).wrap_mode(egui::TextWrapMode::Extend));
    });
}
