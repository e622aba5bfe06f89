//! The results panel: its head (results.rs) and the views behind its tabs, kept together so
//! that the app can tell all of them that the lesson changed, poll their jobs and ask whether
//! any is busy. (Apart from view.rs: the views depend on the trait there, this list depends
//! on them.)

use super::state::ResultTab;
use super::view::{View, ViewContext};
use crate::lesson::Lesson;
use egui::Ui;
use std::sync::Arc;

/// The results panel's views.
#[derive(Default)]
pub struct Views {
    pub result: super::results::ResultView,
    pub diagram: super::diagram::DiagramState,
    pub replay: super::replay::ReplayState,
    pub heatmap: super::heatmap::HeatMapState,
    pub compare: super::compare::CompareState,
    pub machine_code: super::machine_code_view::MachineCodeView,
    pub chart: super::chart::ChartView,
}

impl Views {
    fn all(&self) -> [&dyn View; 7] {
        [
            &self.result,
            &self.diagram,
            &self.replay,
            &self.heatmap,
            &self.compare,
            &self.machine_code,
            &self.chart,
        ]
    }

    fn all_mut(&mut self) -> [&mut dyn View; 7] {
        [
            &mut self.result,
            &mut self.diagram,
            &mut self.replay,
            &mut self.heatmap,
            &mut self.compare,
            &mut self.machine_code,
            &mut self.chart,
        ]
    }
}

/// The whole results panel is a view too: its head, then the picked tab's view(s).
impl View for Views {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        let tab = super::results::head(cx, ui);
        egui::ScrollArea::vertical()
            .id_salt("results_scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| match tab {
                ResultTab::Result => self.result.show(cx, ui),
                ResultTab::Diagram => {
                    // The block replay above the diagram of one output's reads.
                    self.replay.show(cx, ui);
                    ui.separator();
                    self.diagram.show(cx, ui);
                }
                ResultTab::HeatMap => self.heatmap.show(cx, ui),
                ResultTab::Compare => self.compare.show(cx, ui),
                ResultTab::Code => self.machine_code.show(cx, ui),
                ResultTab::Chart => self.chart.show(cx, ui),
            });
    }

    fn lesson_changed(&mut self, lesson: &Arc<Lesson>) {
        for view in self.all_mut() {
            view.lesson_changed(lesson);
        }
    }

    fn poll(&mut self) {
        for view in self.all_mut() {
            view.poll();
        }
    }

    fn busy(&self) -> bool {
        self.all().iter().any(|v| v.busy())
    }
}
