//! CUDA C++ highlighting with syntect, incremental per line: after an edit, lines are
//! re-highlighted from the first changed line only until the parser state matches what it
//! was before, so typing in a 500-line kernel stays smooth. CUDA's own words (`__global__`,
//! `threadIdx`, ...) are coloured on top of syntect's C++ grammar, which does not know them.

use egui::text::{LayoutJob, TextFormat};
use egui::{Color32, FontId};
use syntect::highlighting::{HighlightIterator, HighlightState, Highlighter as SyntectHighlighter, Style, ThemeSet};
use syntect::parsing::{ParseState, ScopeStack, SyntaxSet};

/// Words of haloscope's Rust kernel prelude, coloured like CUDA's own.
const RUST_WORDS: &[&str] = &[
    "thread_idx",
    "block_idx",
    "block_dim",
    "grid_dim",
    "sync_threads",
    "load",
    "store",
    "tile",
    "shared_tile",
];

const CUDA_WORDS: &[&str] = &[
    "__global__",
    "__device__",
    "__host__",
    "__shared__",
    "__constant__",
    "__restrict__",
    "__syncthreads",
    "__syncwarp",
    "__forceinline__",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
];

#[derive(Clone)]
struct LineCache {
    text: String,
    parse_after: ParseState,
    highlight_after: HighlightState,
    spans: Vec<(Color32, bool, std::ops::Range<usize>)>,
}

pub struct Highlighter {
    /// The last job handed out and the text and font it was made for: an unchanged text
    /// costs no highlighting work at all.
    cached: Option<(String, FontId, LayoutJob)>,
    syntaxes: SyntaxSet,
    themes: ThemeSet,
    theme: String,
    lines: Vec<LineCache>,
    cuda_color: Color32,
    rust: bool,
    /// Lines highlighted by the last update (for the tests and the frame benchmark).
    pub last_rehighlighted: usize,
}

impl Highlighter {
    pub fn new(dark: bool) -> Highlighter {
        let mut h = Highlighter {
            cached: None,
            syntaxes: SyntaxSet::load_defaults_newlines(),
            themes: ThemeSet::load_defaults(),
            theme: String::new(),
            lines: Vec::new(),
            cuda_color: Color32::WHITE,
            rust: false,
            last_rehighlighted: 0,
        };
        h.set_dark(dark);
        h
    }

    pub fn set_dark(&mut self, dark: bool) {
        let theme = if dark { "base16-ocean.dark" } else { "InspiredGitHub" };
        if self.theme != theme {
            self.theme = theme.to_string();
            self.cuda_color = if dark {
                Color32::from_rgb(0xE5, 0x9E, 0x6E)
            } else {
                Color32::from_rgb(0x9A, 0x3D, 0x00)
            };
            self.lines.clear();
            self.cached = None;
        }
    }

    /// Rust (`.rs`) or CUDA C++ highlighting.
    pub fn set_rust(&mut self, rust: bool) {
        if self.rust != rust {
            self.rust = rust;
            self.lines.clear();
            self.cached = None;
        }
    }

    /// Highlights `text` into a layout job, reusing every line whose text and incoming parser
    /// state are unchanged.
    pub fn layout(&mut self, text: &str, font: FontId) -> LayoutJob {
        if let Some((t, f, job)) = &self.cached
            && t == text
            && *f == font
        {
            self.last_rehighlighted = 0;
            return job.clone();
        }
        let job = self.layout_uncached(text, font.clone());
        self.cached = Some((text.to_string(), font, job.clone()));
        job
    }

    fn layout_uncached(&mut self, text: &str, font: FontId) -> LayoutJob {
        self.update(text);
        let mut job = LayoutJob::default();
        let mut line_start = 0;
        for (line, cache) in text.split_inclusive('\n').zip(&self.lines) {
            for (color, italic, range) in &cache.spans {
                let format = TextFormat {
                    font_id: font.clone(),
                    color: *color,
                    italics: *italic,
                    ..TextFormat::default()
                };
                job.append(&text[line_start + range.start..line_start + range.end], 0.0, format);
            }
            line_start += line.len();
        }
        if text.is_empty() {
            job.append(
                "",
                0.0,
                TextFormat {
                    font_id: font,
                    ..TextFormat::default()
                },
            );
        }
        job
    }

    fn update(&mut self, text: &str) {
        let new_lines: Vec<&str> = text.split_inclusive('\n').collect();
        let syntax = self
            .syntaxes
            .find_syntax_by_extension("cpp")
            .unwrap_or_else(|| self.syntaxes.find_syntax_plain_text());
        let theme = &self.themes.themes[&self.theme];
        let highlighter = SyntectHighlighter::new(theme);
        let first_changed = self
            .lines
            .iter()
            .zip(&new_lines)
            .take_while(|(c, l)| c.text == **l)
            .count();
        let (mut parse, mut highlight) = match first_changed.checked_sub(1).and_then(|i| self.lines.get(i)) {
            Some(prev) => (prev.parse_after.clone(), prev.highlight_after.clone()),
            None => (
                ParseState::new(syntax),
                HighlightState::new(&highlighter, ScopeStack::new()),
            ),
        };
        let old = std::mem::take(&mut self.lines);
        let shift = old.len() as isize - new_lines.len() as isize;
        let mut lines: Vec<LineCache> = old[..first_changed.min(old.len())].to_vec();
        self.last_rehighlighted = 0;
        let mut i = first_changed;
        while i < new_lines.len() {
            let line = new_lines[i];
            let ops = parse.parse_line(line, &self.syntaxes).unwrap_or_default();
            let mut spans = Vec::new();
            let mut at = 0;
            for (style, piece) in HighlightIterator::new(&mut highlight, &ops, line, &highlighter) {
                spans.push((
                    color_of(style),
                    style.font_style.contains(syntect::highlighting::FontStyle::ITALIC),
                    at..at + piece.len(),
                ));
                at += piece.len();
            }
            let spans = self.recolor_cuda_words(line, spans);
            self.last_rehighlighted += 1;
            lines.push(LineCache {
                text: line.to_string(),
                parse_after: parse.clone(),
                highlight_after: highlight.clone(),
                spans,
            });
            i += 1;
            // Once a recomputed line matches the old one at the same place from the end and
            // leaves the parser in the same state, the rest of the old cache still holds.
            let j = i as isize - 1 + shift;
            if j >= 0 && (j as usize) < old.len() {
                let o = &old[j as usize];
                if o.text == line && o.parse_after == parse && o.highlight_after == highlight {
                    let rest = &old[j as usize + 1..];
                    if rest.len() == new_lines.len() - i && rest.iter().zip(&new_lines[i..]).all(|(c, l)| c.text == *l)
                    {
                        lines.extend_from_slice(rest);
                        break;
                    }
                }
            }
        }
        self.lines = lines;
    }

    fn recolor_cuda_words(
        &self,
        line: &str,
        spans: Vec<(Color32, bool, std::ops::Range<usize>)>,
    ) -> Vec<(Color32, bool, std::ops::Range<usize>)> {
        let mut marks: Vec<std::ops::Range<usize>> = Vec::new();
        for word in if self.rust { RUST_WORDS } else { CUDA_WORDS } {
            let mut from = 0;
            while let Some(pos) = line[from..].find(word) {
                let start = from + pos;
                let end = start + word.len();
                let boundary = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                if boundary(line[..start].chars().next_back()) && boundary(line[end..].chars().next()) {
                    marks.push(start..end);
                }
                from = end;
            }
        }
        if marks.is_empty() {
            return spans;
        }
        let mut out = Vec::new();
        for (color, italic, range) in spans {
            let mut at = range.start;
            for m in marks.iter().filter(|m| m.start < range.end && m.end > range.start) {
                let (s, e) = (m.start.max(range.start), m.end.min(range.end));
                if s > at {
                    out.push((color, italic, at..s));
                }
                out.push((self.cuda_color, false, s..e));
                at = e;
            }
            if at < range.end {
                out.push((color, italic, at..range.end));
            }
        }
        out
    }
}

fn color_of(style: Style) -> Color32 {
    Color32::from_rgb(style.foreground.r, style.foreground.g, style.foreground.b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("    float v{i} = in[i + {i}]; // line {i}\n"))
            .collect()
    }

    #[test]
    fn an_edit_rehighlights_only_nearby_lines() {
        let mut h = Highlighter::new(true);
        let text = kernel(500);
        h.layout(&text, FontId::monospace(12.0));
        assert_eq!(h.last_rehighlighted, 500);
        let edited = text.replacen("v250 =", "v250x =", 1);
        h.layout(&edited, FontId::monospace(12.0));
        assert!(h.last_rehighlighted <= 2, "{}", h.last_rehighlighted);
        // Opening a comment changes every later line's state: all of them are redone.
        let commented = edited.replacen("    float v100", "/*  float v100", 1);
        h.layout(&commented, FontId::monospace(12.0));
        assert_eq!(h.last_rehighlighted, 400);
    }

    #[test]
    fn cuda_words_get_their_colour() {
        let mut h = Highlighter::new(true);
        let job = h.layout("__global__ void k() { __syncthreads(); }\n", FontId::monospace(12.0));
        let colour_of = |word: &str| {
            job.sections
                .iter()
                .find(|s| &job.text[s.byte_range.start.0..s.byte_range.end.0] == word)
                .map(|s| s.format.color)
        };
        assert_eq!(colour_of("__global__"), Some(h.cuda_color));
        assert_eq!(colour_of("__syncthreads"), Some(h.cuda_color));
    }
}
