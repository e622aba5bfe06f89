//! Files the learner opens and saves, and the report export: native dialogs (rfd) run on a
//! thread of their own and answer through a channel that `App::logic` polls.

use super::App;
use super::storage::Storage;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};

pub enum FileAction {
    Open(PathBuf),
    Save(PathBuf),
    ExportReport(PathBuf),
    OpenGrades(PathBuf),
    Cancelled,
}

pub fn open_dialog() -> Receiver<FileAction> {
    dialog(|| {
        rfd::FileDialog::new()
            .add_filter("kernels", &["cu", "cuh", "rs"])
            .pick_file()
            .map(FileAction::Open)
    })
}

pub fn save_dialog(name: String) -> Receiver<FileAction> {
    dialog(move || {
        rfd::FileDialog::new()
            .add_filter("kernels", &["cu", "rs"])
            .set_file_name(name)
            .save_file()
            .map(FileAction::Save)
    })
}

pub fn grades_dialog() -> Receiver<FileAction> {
    dialog(|| {
        rfd::FileDialog::new()
            .add_filter("grading table", &["json"])
            .pick_file()
            .map(FileAction::OpenGrades)
    })
}

pub fn export_dialog() -> Receiver<FileAction> {
    dialog(|| {
        rfd::FileDialog::new()
            .add_filter("JSON", &["json"])
            .set_file_name("report.json")
            .save_file()
            .map(FileAction::ExportReport)
    })
}

/// File dialogs block, so they run on their own thread and answer through a channel.
fn dialog(f: impl FnOnce() -> Option<FileAction> + Send + 'static) -> Receiver<FileAction> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(f().unwrap_or(FileAction::Cancelled));
    });
    rx
}

impl App {
    /// Ctrl+S: the file the learner opened or saved to, else a Save As dialog. The draft is
    /// autosaved either way.
    pub fn save_to_file(&mut self) {
        self.autosave();
        match self.editor.path.clone() {
            Some(path) => match Storage::write_file(&path, self.editor.text.as_bytes()) {
                Ok(()) => self.status = format!("saved {}", path.display()),
                Err(e) => self.status = format!("cannot save {}: {e}", path.display()),
            },
            None => self.file_dialog = Some(save_dialog(self.editor.file_name())),
        }
    }

    /// Puts a kernel file in the editor (Open…, `haloscope FILE`, `--open`): the bar then
    /// calls it by its name, and Ctrl+S writes back to it.
    pub fn open_kernel_file(&mut self, path: &std::path::Path) {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                self.editor.replace_text(text);
                self.editor.path = Some(path.to_path_buf());
                self.status = format!("opened {}", path.display());
            }
            Err(e) => self.status = format!("cannot open {}: {e}", path.display()),
        }
    }

    pub(super) fn poll_file_dialog(&mut self) {
        let Some(rx) = &self.file_dialog else { return };
        let Ok(action) = rx.try_recv() else { return };
        self.file_dialog = None;
        match action {
            FileAction::Open(path) => self.open_kernel_file(&path),
            FileAction::Save(path) => {
                self.editor.path = Some(path);
                self.save_to_file();
            }
            FileAction::ExportReport(path) => {
                let text = self
                    .current_outcome()
                    .map(|o| serde_json::to_string_pretty(&o.report).unwrap_or_default());
                match text.map(|t| Storage::write_file(&path, t.as_bytes())) {
                    Some(Ok(())) => self.status = format!("report saved to {}", path.display()),
                    Some(Err(e)) => self.status = format!("cannot write {}: {e}", path.display()),
                    None => self.status = "no report to export yet".into(),
                }
            }
            FileAction::OpenGrades(path) => self.open_grading_table(&path),
            FileAction::Cancelled => {}
        }
    }

    pub fn open_dialog(&mut self) {
        self.file_dialog = Some(open_dialog());
    }

    pub fn grades_dialog(&mut self) {
        self.file_dialog = Some(grades_dialog());
    }

    pub fn export_report_dialog(&mut self) {
        self.file_dialog = Some(export_dialog());
    }
}
