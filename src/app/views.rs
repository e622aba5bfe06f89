//! The results panel: its head (results.rs) and the tabs behind it. `TABS` below is the one
//! list of them: it gives the tabs' order, their titles, the ids the preferences and
//! `--tab` use, and the views each shows; the app tells every view that the lesson changed,
//! polls their jobs and asks whether any is busy through it, and the view tests walk it. A
//! new tab is a new view file and one line in `TABS`.

use super::view::{View, ViewContext};
use crate::lesson::Lesson;
use egui::Ui;
use std::any::Any;
use std::sync::Arc;

/// One tab of the results panel.
pub struct TabSpec {
    /// Saved in the preferences and given to `--tab` (compared without case, so the names
    /// an older version saved, "HeatMap", still pick their tab).
    pub id: &'static str,
    /// The tab's label.
    pub title: &'static str,
    /// Shown when the pointer rests on the label.
    pub hover: Option<&'static str>,
    /// The views the tab shows, top to bottom, with a separator between them.
    make: fn() -> Vec<Box<dyn AnyView>>,
}

/// A view in a box, with what `Views::get` needs to give it back as its own type.
pub trait AnyView: View + Any {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: View + Any> AnyView for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

fn one<T: AnyView + Default>() -> Vec<Box<dyn AnyView>> {
    vec![Box::new(T::default())]
}

/// The results panel's tabs, in the order they are shown.
pub const TABS: &[TabSpec] = &[
    tab("result", "Result", None, one::<super::results::ResultView>),
    // The block replay above the diagram of one output's reads.
    tab("diagram", "Diagram", None, || {
        vec![
            Box::new(super::replay::ReplayState::default()),
            Box::new(super::diagram::DiagramState::default()),
        ]
    }),
    tab("heatmap", "Heat map", None, one::<super::heatmap::HeatMapState>),
    tab("compare", "Compare", None, one::<super::compare::CompareState>),
    tab("chart", "Chart", None, one::<super::chart::ChartView>),
    tab(
        "code",
        "PTX & SASS",
        Some("The PTX and SASS of the cursor's line, with each memory instruction's sectors"),
        one::<super::machine_code_view::MachineCodeView>,
    ),
];

const fn tab(
    id: &'static str,
    title: &'static str,
    hover: Option<&'static str>,
    make: fn() -> Vec<Box<dyn AnyView>>,
) -> TabSpec {
    TabSpec { id, title, hover, make }
}

/// The tab whose id is `id` (without case), if there is one.
pub fn find_tab(id: &str) -> Option<&'static TabSpec> {
    TABS.iter().find(|t| t.id.eq_ignore_ascii_case(id))
}

/// The ids of every tab, in order (for `--tab`'s help and error).
pub fn tab_ids() -> Vec<&'static str> {
    TABS.iter().map(|t| t.id).collect()
}

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
        let picked = super::results::head(cx, ui);
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
        views.get_mut::<super::super::replay::ReplayState>();
        views.get::<super::super::heatmap::HeatMapState>();
        assert!(!views.busy());
    }
}
