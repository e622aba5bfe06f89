//! The results panel: its head (results_head.rs) and the views of the tabs that `tabs::TABS`
//! lists, built from that list; the app tells every view that the lesson changed, polls
//! their jobs and asks whether any is busy through it.

use super::tabs::{AnyView, TABS};
use super::view::{View, ViewContext};
use crate::lesson::Lesson;
use egui::Ui;
use std::sync::Arc;

/// The results panel's views, tab by tab as `TABS` lists them.
pub struct Views {
    tabs: Vec<Vec<Box<dyn AnyView>>>,
}

impl Default for Views {
    fn default() -> Views {
        Views {
            tabs: TABS.iter().map(|t| (t.make)()).collect(),
        }
    }
}

impl Views {
    fn all(&self) -> impl Iterator<Item = &dyn AnyView> {
        self.tabs.iter().flatten().map(|v| v.as_ref())
    }

    fn all_mut(&mut self) -> impl Iterator<Item = &mut Box<dyn AnyView>> {
        self.tabs.iter_mut().flatten()
    }

    /// The view of type `T` (tests read a view's state; the app sets a view up at start).
    pub fn get<T: AnyView>(&self) -> &T {
        self.all()
            .find_map(|v| v.as_any().downcast_ref::<T>())
            .expect("every view type is in TABS")
    }

    pub fn get_mut<T: AnyView>(&mut self) -> &mut T {
        self.all_mut()
            .find_map(|v| v.as_any_mut().downcast_mut::<T>())
            .expect("every view type is in TABS")
    }
}

/// The whole results panel is a view too: its head, then the picked tab's views.
impl View for Views {
    fn show(&mut self, cx: &ViewContext, ui: &mut Ui) {
        let picked = super::results_head::head(cx, ui);
        let index = TABS.iter().position(|t| std::ptr::eq(t, picked)).unwrap_or(0);
        egui::ScrollArea::vertical()
            .id_salt("results_scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                for (k, view) in self.tabs[index].iter_mut().enumerate() {
                    if k > 0 {
                        ui.separator();
                    }
                    view.show(cx, ui);
                }
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
        self.all().any(|v| v.busy())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tabs::{find_tab, tab_ids};
    use super::*;

    #[test]
    fn tab_ids_are_unique_and_older_saved_names_still_find_their_tab() {
        let ids = tab_ids();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
        // What the enum this list replaced wrote into prefs.json.
        for (saved, id) in [
            ("Result", "result"),
            ("HeatMap", "heatmap"),
            ("Code", "code"),
            ("Chart", "chart"),
        ] {
            assert_eq!(find_tab(saved).map(|t| t.id), Some(id));
        }
        assert!(find_tab("nope").is_none());
    }

    #[test]
    fn every_view_type_is_found_by_its_type() {
        let mut views = Views::default();
        views.get_mut::<super::super::replay_view::ReplayState>();
        views.get::<super::super::heatmap::HeatMapState>();
        assert!(!views.busy());
    }
}
