//! The headless command line: how tests, CI and classroom grading drive haloscope.

mod check;
mod doctor;
mod grade;
mod heatmap;
mod lessons;
mod listing;
mod print;
mod run;

use crate::backend::BackendChoice;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "haloscope",
    version,
    about = "Lessons on how GPU stencil kernels spend global-memory traffic"
)]
pub struct Cli {
    /// Course directory holding one folder per lesson (default: ./lessons or the installed course).
    #[arg(long, global = true, value_name = "DIR")]
    pub lessons: Option<PathBuf>,

    /// The GPU to run on, by its index in `haloscope doctor`'s list (default: the first GPU
    /// that drives no display). Same as HALOSCOPE_DEVICE; the app takes it too.
    #[arg(long, global = true, value_name = "N")]
    pub device: Option<usize>,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// A kernel file to open in the app (what the desktop entry's "Open with" passes).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Open the desktop app (the default when no command is given).
    Gui(GuiArgs),
    /// List the lessons of the course.
    Lessons,
    /// Compile, verify every size and profile a kernel against a lesson's contract.
    Run(RunArgs),
    /// Compile a kernel for a lesson and print (or write) its PTX, without running it.
    Compile {
        #[arg(long)]
        lesson: String,
        #[arg(long, value_name = "FILE")]
        kernel: PathBuf,
        /// Compute capability to compile for (default 90).
        #[arg(long, default_value_t = 90)]
        sm: u32,
        /// Write the PTX here instead of printing it.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// The PTX as the GPU worker loads it: printf calls gated (src/backend/gpu/printf_gate.rs).
        #[arg(long)]
        printf_gate: bool,
        /// List the PTX per source line (with --sass: both; alone --lines lists both).
        #[arg(long)]
        ptx: bool,
        /// List the SASS (the sm_90 cubin, disassembled with its line table) per source line.
        #[arg(long)]
        sass: bool,
        /// Only these source lines: `23` or `17-27`.
        #[arg(long, value_name = "LINES")]
        lines: Option<String>,
        /// Run the kernel first and put its sectors on each memory instruction (emu, gpu, auto).
        #[arg(long, value_name = "BACKEND", num_args = 0..=1, default_missing_value = "emu")]
        sectors: Option<BackendChoice>,
    },
    /// Work on lesson files.
    Lesson {
        #[command(subcommand)]
        command: LessonCommand,
    },
    /// Show what haloscope found: NVRTC, driver, GPU, CUPTI.
    Doctor,
    /// Fetch NVRTC (and, for CUDA 12, the CUDA headers) from PyPI into haloscope's data folder.
    /// Done by itself the first time a kernel is compiled on a machine without NVRTC; this
    /// does it now (a lab set-up), or again with --force.
    Setup {
        /// NVRTC major to fetch (default: the one this machine's driver and GPU take).
        #[arg(long, value_parser = ["12", "13"])]
        major: Option<String>,
        /// Fetch it even when an NVRTC is found already.
        #[arg(long)]
        force: bool,
    },
    /// List the PTX instruction forms the emulator runs and those it does not.
    EmulatorCoverage,
    /// How many times each input element is fetched from global memory in one launch (the
    /// app's heat map), on the emulator.
    Heatmap(HeatmapArgs),
    /// Grade a folder of submissions (kernel files, or one folder per student) against a
    /// lesson: a table in CSV and JSON (docs/teaching.md).
    Grade(GradeArgs),
    /// Check a kernel for hazards only (races, out-of-bounds and uninitialised reads, barrier
    /// misuse) on the emulator at small sizes, named the way compute-sanitizer's tools name them.
    Check {
        #[arg(long)]
        lesson: String,
        #[arg(long, value_name = "FILE")]
        kernel: std::path::PathBuf,
        /// Sizes to run at (default: the lesson's verification sizes below its profile size).
        #[arg(long = "n")]
        sizes: Vec<u32>,
        #[arg(long)]
        json: bool,
    },
    /// Launch kernels on the GPU with no profiler attached (for `ncu` comparisons): each
    /// `--kernel` in turn, `count` times, one line per kernel on stdout.
    #[command(hide = true)]
    Launch {
        #[arg(long)]
        lesson: String,
        #[arg(long, value_name = "FILE", num_args = 1.., required = true)]
        kernel: Vec<std::path::PathBuf>,
        /// Problem size (default: the lesson's profile size); several launch each in turn.
        #[arg(long)]
        n: Vec<u32>,
        #[arg(long, default_value_t = 1)]
        count: u32,
        /// The run seed whose profile input to launch on (as `run --seed`).
        #[arg(long, default_value_t = 7)]
        seed: u64,
    },
    /// The GPU worker process (started by haloscope itself; JSON lines on stdin/stdout).
    #[command(hide = true)]
    Worker {
        /// Answer one request and exit (the CUPTI profiler child).
        #[arg(long)]
        one_shot: bool,
    },
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Lesson id, e.g. stencil-2d.
    #[arg(long)]
    pub lesson: String,
    /// Kernel source to run (default: the lesson's starter).
    #[arg(long, value_name = "FILE")]
    pub kernel: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = BackendChoice::Auto)]
    pub backend: BackendChoice,
    /// Print one JSON RunReport instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Seed for the random inputs (default: a fresh one each run).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Path of libnvrtc to use (also: $HALOSCOPE_NVRTC).
    #[arg(long, value_name = "FILE")]
    pub nvrtc: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct GradeArgs {
    #[arg(long)]
    pub lesson: String,
    /// The submissions: kernel files, or one folder per student with a .cu or .rs in it.
    pub submissions: PathBuf,
    /// emu (default: the same figures on every machine), gpu or auto.
    #[arg(long, default_value = "emu", value_parser = ["emu", "gpu", "auto"])]
    pub backend: String,
    /// Submissions graded at once (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Wall-time limit per submission, seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout: u64,
    /// Address-space limit per submission, MiB (0: none).
    #[arg(long, default_value_t = 8192)]
    pub memory_mb: u64,
    /// Seed of this grading (default: a fresh one, printed and recorded per row).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where grades.json, grades.csv and reports/ go (default: SUBMISSIONS/grades-LESSON).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Grade unchanged submissions again too.
    #[arg(long)]
    pub force: bool,
    /// Do not run the lesson's own kernels first.
    #[arg(long)]
    pub skip_lesson_check: bool,
}

#[derive(clap::Args, Debug)]
pub struct HeatmapArgs {
    #[arg(long)]
    pub lesson: String,
    /// Kernel source (default: the lesson's starter).
    #[arg(long, value_name = "FILE")]
    pub kernel: Option<PathBuf>,
    /// Launch size (default: the lesson's middle verification size).
    #[arg(long)]
    pub n: Option<u32>,
    /// First element of the window counted in a large launch, as x,y,z.
    #[arg(long, value_delimiter = ',', num_args = 1..=3)]
    pub origin: Vec<u32>,
    /// Print the counts as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug, Default)]
pub struct GuiArgs {
    /// Lesson to open (default: the last one).
    #[arg(long)]
    pub lesson: Option<String>,
    /// Press Run once the window is up.
    #[arg(long)]
    pub run: bool,
    /// Save a screenshot here after the first run, then quit (for the docs and CI).
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,
    /// Where drafts, attempts and preferences live (default: $HALOSCOPE_DATA or ~/.local/share/haloscope).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Repaint continuously for N frames, print frame times as JSON, quit.
    #[arg(long, value_name = "N")]
    pub frame_bench: Option<usize>,
    /// Load this file into the editor at start.
    #[arg(long, value_name = "FILE")]
    pub open: Option<PathBuf>,
    /// Start on this results tab: result, diagram, heatmap, compare, chart or code.
    #[arg(long)]
    pub tab: Option<String>,
    /// Start in presenter mode (F5 toggles it).
    #[arg(long)]
    pub present: bool,
    /// Play the block replay as soon as a run has finished, at its fastest (60 steps/s):
    /// the frame benchmark of a moving picture.
    #[arg(long)]
    pub play: bool,
    /// Open a grading table (grades.json from `haloscope grade`).
    #[arg(long, value_name = "FILE")]
    pub grades: Option<PathBuf>,
    /// Open the block replay at this step (screenshots of a moment of it).
    #[arg(long, value_name = "N")]
    pub replay_step: Option<usize>,
    /// Put the editor's cursor on this line at start (the Code tab shows its instructions).
    #[arg(long, value_name = "N")]
    pub line: Option<u32>,
}

#[derive(Subcommand, Debug)]
pub enum LessonCommand {
    /// Validate one lesson directory: contract, files, and that its kernels behave as declared.
    Check {
        dir: PathBuf,
        /// Only check the files, do not compile or run the kernels.
        #[arg(long)]
        no_run: bool,
    },
}

/// Runs a parsed command line and returns the process exit code.
pub fn main_with(cli: Cli) -> i32 {
    if let Some(index) = cli.device {
        // The GPU worker is a child process: the choice travels in its environment.
        // SAFETY: main_with runs first thing in main, before any thread is started.
        unsafe { std::env::set_var(crate::machine::DEVICE_ENV, index.to_string()) };
    }
    let course_dir = cli.lessons.clone().unwrap_or_else(crate::lesson::default_course_dir);
    let compiles = matches!(
        cli.command,
        Some(
            Command::Run(_)
                | Command::Compile { .. }
                | Command::Check { .. }
                | Command::Heatmap(_)
                | Command::Grade(_)
                | Command::Launch { .. }
                | Command::Lesson { .. }
        )
    );
    if compiles {
        // First use of an installed haloscope on a machine without NVRTC: fetch it now. On
        // failure the command goes on and its own compile error says what is missing.
        if let Err(e) = crate::cuda_setup::ensure_for_cli() {
            eprintln!("haloscope: {e}");
        }
    }
    match cli.command {
        Some(Command::Lessons) => lessons::list(&course_dir),
        Some(Command::Run(args)) => run::run(&course_dir, &args),
        Some(Command::Lesson {
            command: LessonCommand::Check { dir, no_run },
        }) => lessons::check(&dir, no_run),
        Some(Command::Doctor) => doctor::doctor(),
        Some(Command::Setup { major, force }) => setup(major.and_then(|m| m.parse().ok()), force),
        Some(Command::EmulatorCoverage) => emulator_coverage(),
        Some(Command::Heatmap(args)) => heatmap::heatmap(&course_dir, &args),
        Some(Command::Grade(args)) => grade::run(&course_dir, &args),
        Some(Command::Compile {
            lesson,
            kernel,
            sm,
            output,
            printf_gate,
            ptx,
            sass,
            lines,
            sectors,
        }) => {
            if ptx || sass || lines.is_some() || sectors.is_some() {
                let args = listing::ListingArgs {
                    ptx,
                    sass,
                    lines: lines.as_deref(),
                    sectors,
                };
                listing::listing(&course_dir, &lesson, &kernel, &args)
            } else {
                run::compile(&course_dir, &lesson, &kernel, sm, output.as_deref(), printf_gate)
            }
        }
        Some(Command::Check {
            lesson,
            kernel,
            sizes,
            json,
        }) => check::run(&course_dir, &lesson, &kernel, &sizes, json),
        Some(Command::Launch {
            lesson,
            kernel,
            n,
            count,
            seed,
        }) => run::launch(&course_dir, &lesson, &kernel, &n, count, seed),
        Some(Command::Worker { one_shot }) => crate::backend::gpu::worker_main(one_shot),
        Some(Command::Gui(args)) => gui(course_dir, args),
        None => gui(
            course_dir,
            GuiArgs {
                open: cli.file,
                ..GuiArgs::default()
            },
        ),
    }
}

fn setup(major: Option<u32>, force: bool) -> i32 {
    let needed = crate::cuda_setup::needed();
    let Some(major) = major.or(needed).or(force.then(|| {
        crate::cudalibs::LibFit::for_this_machine(crate::cudalibs::CudaLib::Nvrtc)
            .majors
            .first()
            .copied()
            .unwrap_or(13)
    })) else {
        println!("NVRTC is found already (see `haloscope doctor`); --force fetches it anyway");
        return 0;
    };
    match crate::cuda_setup::run_with_terminal_progress(major) {
        Ok(done) => {
            println!("NVRTC {major} set up in {}", crate::cuda_setup::deps_root().display());
            for wheel in &done.wheels {
                println!("  {wheel}");
            }
            0
        }
        Err(e) => {
            eprintln!("haloscope: {e}");
            1
        }
    }
}

fn emulator_coverage() -> i32 {
    let rows = crate::backend::emu::coverage::coverage();
    let supported = rows.iter().filter(|r| r.2.is_none()).count();
    for (group, text, why) in &rows {
        match why {
            None => println!("yes  {group:<8} {text}"),
            Some(why) => println!("no   {group:<8} {text}    -- {why}"),
        }
    }
    println!("{supported} of {} instruction forms supported", rows.len());
    0
}

fn gui(course_dir: PathBuf, args: GuiArgs) -> i32 {
    let result_tab = match args.tab.as_deref() {
        None => None,
        Some(id) => match crate::app::tabs::find_tab(id) {
            Some(tab) => Some(tab.id),
            None => {
                let ids = crate::app::tabs::tab_ids().join(", ");
                eprintln!("error: there is no results tab `{id}`; the tabs are {ids}");
                return 2;
            }
        },
    };
    crate::app::run_gui(crate::app::GuiOptions {
        course_dir,
        data_dir: args.data_dir.unwrap_or_else(crate::app::storage::default_data_dir),
        lesson: args.lesson,
        run_at_start: args.run,
        screenshot: args.screenshot,
        frame_bench: args.frame_bench,
        load_file: args.open,
        presenting: args.present,
        play_replay: args.play,
        replay_step: args.replay_step,
        start_line: args.line,
        grades: args.grades,
        result_tab,
        seed: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_alone_opens_the_app_and_subcommands_still_parse() {
        // The desktop entry's `haloscope %F`.
        let cli = Cli::try_parse_from(["haloscope", "my_kernel.cu"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.file, Some(PathBuf::from("my_kernel.cu")));
        // Global options before a subcommand leave it a subcommand.
        let cli = Cli::try_parse_from(["haloscope", "--lessons", "course", "lessons"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Lessons)));
        assert_eq!(cli.lessons, Some(PathBuf::from("course")));
        let cli = Cli::try_parse_from(["haloscope", "--device", "1", "run", "--lesson", "stencil-1d"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Run(_))));
        assert!(Cli::try_parse_from(["haloscope"]).unwrap().command.is_none());
    }
}
