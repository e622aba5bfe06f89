//! The one list of the results panel's tabs: their order, titles, the ids the preferences and
//! `--tab` use, and the views each shows. The panel's head draws the row of tabs from it,
//! `views::Views` builds its views from it, and the kittest that opens every tab walks it.
//! A new tab is a new view file and one line in `TABS`.

use super::view::View;
use std::any::Any;

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
    pub(super) make: fn() -> Vec<Box<dyn AnyView>>,
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
            Box::new(super::replay_view::ReplayState::default()),
            Box::new(super::diagram::DiagramState::default()),
        ]
    }),
    tab("heatmap", "Heat map", None, one::<super::heatmap::HeatMapState>),
    tab("compare", "Compare", None, one::<super::compare_view::CompareState>),
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
