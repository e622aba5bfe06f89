//! The results panel's views with state of their own, kept together so that the app can
//! tell all of them that the lesson changed, poll their jobs and ask whether any is busy.
//! (Apart from view.rs: the views depend on the trait there, this list depends on them.)

use super::view::View;
use crate::lesson::Lesson;
use std::sync::Arc;

/// The results panel's views with state of their own.
pub struct Views {
    pub diagram: super::diagram::DiagramState,
    pub replay: super::replay::ReplayState,
    pub heatmap: super::heatmap::HeatMapState,
    pub compare: super::compare::CompareState,
    pub machine_code: super::machine_code_view::MachineCodeView,
    pub chart: super::chart::ChartView,
}

impl Views {
    fn all(&self) -> [&dyn View; 6] {
        [
            &self.diagram,
            &self.replay,
            &self.heatmap,
            &self.compare,
            &self.machine_code,
            &self.chart,
        ]
    }

    fn all_mut(&mut self) -> [&mut dyn View; 6] {
        [
            &mut self.diagram,
            &mut self.replay,
            &mut self.heatmap,
            &mut self.compare,
            &mut self.machine_code,
            &mut self.chart,
        ]
    }

    pub fn lesson_changed(&mut self, lesson: &Arc<Lesson>) {
        for view in self.all_mut() {
            view.lesson_changed(lesson);
        }
    }

    pub fn poll(&mut self) {
        for view in self.all_mut() {
            view.poll();
        }
    }

    pub fn busy(&self) -> bool {
        self.all().iter().any(|v| v.busy())
    }
}
