// Baseline for the GUI frame benchmark: an eframe window showing one label, repainting back
// to back with vsync off. Whatever it costs per frame is the renderer's floor, not haloscope's.
use std::time::Instant;

struct Empty {
    last: Option<Instant>,
    times: Vec<f64>,
}

impl eframe::App for Empty {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        egui::CentralPanel::default().show(ui, |ui| ui.label("empty"));
        let now = Instant::now();
        if let Some(last) = self.last {
            self.times.push((now - last).as_secs_f64() * 1e3);
        }
        self.last = Some(now);
        if self.times.len() >= 300 {
            self.times.sort_by(f64::total_cmp);
            println!("{{\"empty_window_frame_median_ms\": {:.2}}}", self.times[150]);
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
        ui.ctx().request_repaint();
    }
}

fn main() {
    let mut options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([1500.0, 920.0]),
        multisampling: 0,
        ..Default::default()
    };
    options.glow_options.vsync = false;
    eframe::run_native(
        "empty",
        options,
        Box::new(|_| {
            Ok(Box::new(Empty {
                last: None,
                times: Vec::new(),
            }))
        }),
    )
    .unwrap();
}
