//! Colours and visuals: dark, light, and a high-contrast projector theme with heavier lines.

use super::state::Theme;
use egui::{Color32, Stroke, Visuals};

/// Colours the diagram and results use, per theme.
#[derive(Clone, Copy)]
pub struct Palette {
    pub owned: Color32,
    pub halo: Color32,
    pub corner: Color32,
    pub outside: Color32,
    pub shared: Color32,
    pub global: Color32,
    pub register: Color32,
    /// A read served from a cluster neighbour's shared memory.
    pub neighbour: Color32,
    pub pass: Color32,
    pub fail: Color32,
    pub text: Color32,
    pub stroke: f32,
}

pub fn palette(theme: Theme) -> Palette {
    match theme {
        Theme::Dark => Palette {
            owned: Color32::from_rgb(0x2E, 0x5E, 0x8C),
            halo: Color32::from_rgb(0xB0, 0x6A, 0x1C),
            corner: Color32::from_rgb(0x4A, 0x4A, 0x4A),
            outside: Color32::from_rgb(0x25, 0x25, 0x25),
            shared: Color32::from_rgb(0x4C, 0xD1, 0x6B),
            global: Color32::from_rgb(0xFF, 0x5A, 0x4E),
            register: Color32::from_rgb(0xC3, 0x8B, 0xFF),
            neighbour: Color32::from_rgb(0x3D, 0xC8, 0xE6),
            pass: Color32::from_rgb(0x4C, 0xD1, 0x6B),
            fail: Color32::from_rgb(0xFF, 0x6B, 0x5E),
            text: Color32::from_gray(230),
            stroke: 1.0,
        },
        Theme::Light => Palette {
            owned: Color32::from_rgb(0x9C, 0xC3, 0xE8),
            halo: Color32::from_rgb(0xF2, 0xB8, 0x6B),
            corner: Color32::from_rgb(0xC8, 0xC8, 0xC8),
            outside: Color32::from_rgb(0xEE, 0xEE, 0xEE),
            shared: Color32::from_rgb(0x12, 0x8A, 0x3A),
            global: Color32::from_rgb(0xC6, 0x28, 0x28),
            register: Color32::from_rgb(0x6A, 0x2B, 0xC2),
            neighbour: Color32::from_rgb(0x00, 0x7C, 0x99),
            pass: Color32::from_rgb(0x12, 0x7A, 0x33),
            fail: Color32::from_rgb(0xB3, 0x1B, 0x1B),
            text: Color32::from_gray(20),
            stroke: 1.0,
        },
        Theme::Projector => Palette {
            owned: Color32::from_rgb(0x00, 0x4C, 0xFF),
            halo: Color32::from_rgb(0xFF, 0x9A, 0x00),
            corner: Color32::from_rgb(0x70, 0x70, 0x70),
            outside: Color32::WHITE,
            shared: Color32::from_rgb(0x00, 0x9A, 0x2E),
            global: Color32::from_rgb(0xE0, 0x00, 0x00),
            register: Color32::from_rgb(0x8A, 0x00, 0xD4),
            neighbour: Color32::from_rgb(0x00, 0x8B, 0xB0),
            pass: Color32::from_rgb(0x00, 0x80, 0x00),
            fail: Color32::from_rgb(0xD0, 0x00, 0x00),
            text: Color32::BLACK,
            stroke: 2.5,
        },
    }
}

pub fn visuals(theme: Theme) -> Visuals {
    match theme {
        Theme::Dark => Visuals::dark(),
        Theme::Light => Visuals::light(),
        Theme::Projector => {
            let mut v = Visuals::light();
            v.override_text_color = Some(Color32::BLACK);
            v.panel_fill = Color32::WHITE;
            v.window_fill = Color32::WHITE;
            v.extreme_bg_color = Color32::WHITE;
            v.widgets.noninteractive.bg_stroke = Stroke::new(1.5, Color32::BLACK);
            v.widgets.inactive.bg_stroke = Stroke::new(1.5, Color32::BLACK);
            v.widgets.hovered.bg_stroke = Stroke::new(2.5, Color32::BLACK);
            v.widgets.active.bg_stroke = Stroke::new(2.5, Color32::BLACK);
            v.selection.bg_fill = Color32::from_rgb(0xFF, 0xE0, 0x00);
            v.selection.stroke = Stroke::new(2.0, Color32::BLACK);
            v
        }
    }
}

pub fn is_dark(theme: Theme) -> bool {
    theme == Theme::Dark
}
