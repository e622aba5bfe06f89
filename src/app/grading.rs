//! A grading table opened in the app (`haloscope grade`'s grades.json), for walking through
//! a class's answers: the rows (student, verdict, sectors) in a window, and for the picked
//! student the submission, read-only, with its report's verdict, sizes and findings.

use super::App;
use super::theme::palette;
use crate::grade::table::{GradeRow, GradeTable, GradeVerdict};
use crate::report::{RunReport, thousands};
use egui::{RichText, Ui};
use std::path::{Path, PathBuf};

pub struct GradingView {
    pub path: PathBuf,
    pub table: GradeTable,
    pub selected: Option<usize>,
    /// The picked student's source and report, read once per pick.
    shown: Option<(usize, String, Option<RunReport>)>,
}

impl GradingView {
    pub fn open(path: &Path) -> Result<GradingView, String> {
        Ok(GradingView {
            path: path.to_path_buf(),
            table: GradeTable::load(path)?,
            selected: None,
            shown: None,
        })
    }

    fn load_selected(&mut self) {
        let Some(i) = self.selected else { return };
        if self.shown.as_ref().is_some_and(|(j, _, _)| *j == i) {
            return;
        }
        let row = &self.table.rows[i];
        let source = if row.file.is_empty() {
            "(no kernel file was handed in)".to_string()
        } else {
            let path = self.table.submissions.join(&row.file);
            std::fs::read_to_string(&path).unwrap_or_else(|e| format!("(cannot read {}: {e})", path.display()))
        };
        let folder = self.path.parent().unwrap_or(Path::new("."));
        let report = row
            .report
            .as_ref()
            .and_then(|r| std::fs::read_to_string(folder.join(r)).ok())
            .and_then(|t| serde_json::from_str(&t).ok());
        self.shown = Some((i, source, report));
    }
}

/// The grading window, when a table is open.
pub fn show(app: &mut App, ctx: &egui::Context) {
    let pal = palette(app.saved.prefs.theme);
    let Some(view) = app.grading.as_mut() else { return };
    let mut open = true;
    let title = format!("Grading: {} ({} submissions)", view.table.lesson, view.table.rows.len());
    egui::Window::new(title)
        .id(egui::Id::unique("grading window"))
        .open(&mut open)
        .default_size([900.0, 620.0])
        .min_height(420.0)
        .show(ctx, |ui| {
            ui.label(RichText::new(view.path.display().to_string()).small().weak());
            ui.columns(2, |columns| {
                rows(&mut columns[0], view, &pal);
                view.load_selected();
                submission(&mut columns[1], view, &pal);
            });
        });
    if !open {
        app.grading = None;
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
    let (Some(i), Some((_, source, report))) = (view.selected, &view.shown) else {
        ui.label("Pick a student to see the submission and its report.");
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
            ui.label(RichText::new(&f.message).small().color(pal.fail));
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
