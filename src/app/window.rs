//! Opening the native window: size, renderer options, and a clear message when there is no
//! display.

use super::{App, GuiOptions};

/// Opens the window. Returns the process exit code.
pub fn run_gui(options: GuiOptions) -> i32 {
    // `HALOSCOPE_WINDOW=1280x800` sets the first window size (benchmarks, screenshots).
    let size = std::env::var("HALOSCOPE_WINDOW")
        .ok()
        .and_then(|v| {
            v.split_once('x')
                .and_then(|(w, h)| Some([w.parse::<f32>().ok()?, h.parse::<f32>().ok()?]))
        })
        .unwrap_or([1500.0, 920.0]);
    let mut native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("haloscope")
            .with_icon(app_icon())
            .with_inner_size(size)
            .with_app_id("haloscope"),
        persist_window: std::env::var_os("HALOSCOPE_WINDOW").is_none(),
        // The window and panel layout live with the learner's data, so a fresh data
        // directory (a screenshot, a test, a classroom account) starts from the defaults.
        persistence_path: Some(options.data_dir.join("window")),
        multisampling: 0,
        ..Default::default()
    };
    // The frame benchmark measures how long a frame takes, not the display's refresh.
    native.glow_options.vsync = options.frame_bench.is_none();
    let result = eframe::run_native(
        "haloscope",
        native,
        Box::new(move |cc| {
            // Anti-aliasing feathering doubles the triangles; on a software rasterizer (a
            // laptop without GPU drivers, Xvfb) that is most of the frame. Set it either way,
            // since eframe persists egui's options between runs.
            let renderer = cc.gl.as_ref().map(|gl| {
                use eframe::glow::HasContext;
                // SAFETY: a plain string query on the context eframe just created.
                unsafe { gl.get_parameter_string(eframe::glow::RENDERER) }
            });
            let software = renderer
                .as_deref()
                .is_some_and(|r| r.contains("llvmpipe") || r.contains("softpipe") || r.contains("Software"));
            cc.egui_ctx.tessellation_options_mut(|t| t.feathering = !software);
            if options.frame_bench.is_some() {
                eprintln!(
                    "haloscope: renderer {:?}, feathering {}",
                    renderer.unwrap_or_default(),
                    !software
                );
            }
            Ok(Box::new(App::new(options)))
        }),
    );
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!(
                "haloscope: cannot open the window ({e}).\nWith no display, use the command line: `haloscope run --lesson stencil-2d` (see `haloscope --help`)."
            );
            20
        }
    }
}

/// The window and taskbar icon: icons/haloscope-256.png (rendered from icons/haloscope.svg by
/// icons/render.sh), built into the binary so an installed copy has it too.
pub fn app_icon() -> egui::IconData {
    eframe::icon_data::from_png_bytes(include_bytes!("../../icons/haloscope-256.png")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_icon_decodes() {
        let icon = super::app_icon();
        assert_eq!((icon.width, icon.height), (256, 256));
        assert_eq!(icon.rgba.len(), 256 * 256 * 4);
    }
}
