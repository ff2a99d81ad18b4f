//! A drawn figure (SVG text and the data behind it as CSV), and the
//! tooltips laid over plotters' drawing: invisible shapes carrying an SVG
//! `<title>` (frame numbers, values) at the pixels plotters mapped the data
//! to, so that hovering a point in a browser says what it is.

use std::fmt::Write;

/// One figure of a report.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File stem in the assets folder, unique in the report.
    pub name: String,
    /// Said above the figure and in its `<title>`.
    pub title: String,
    /// How to read it (below the figure).
    pub caption: String,
    /// The drawing: an SVG document, tooltips included.
    pub svg: String,
    /// The data drawn, one row per point or bar, with a header.
    pub csv: String,
}

/// Tooltip shapes collected while drawing.
#[derive(Default)]
pub struct Tips {
    shapes: String,
    /// Tooltip shapes added so far.
    pub count: usize,
}

impl Tips {
    /// Adds a circular tooltip area of `radius` pixels around (x, y).
    pub fn point(&mut self, (x, y): (i32, i32), radius: i32, text: &str) {
        let _ = write!(
            self.shapes,
            r#"<circle cx="{x}" cy="{y}" r="{radius}"><title>{}</title></circle>"#,
            escape(text)
        );
        self.count += 1;
    }

    /// Adds a rectangular tooltip area between two corners (at least 3 px
    /// wide and high).
    pub fn rect(&mut self, (x0, y0): (i32, i32), (x1, y1): (i32, i32), text: &str) {
        let (x, w) = (x0.min(x1), (x1 - x0).abs().max(3));
        let (y, h) = (y0.min(y1), (y1 - y0).abs().max(3));
        let _ = write!(
            self.shapes,
            r#"<rect x="{x}" y="{y}" width="{w}" height="{h}"><title>{}</title></rect>"#,
            escape(text)
        );
        self.count += 1;
    }

    /// The SVG with the tooltips on top and the figure's title for screen
    /// readers. Plotters writes one `<svg ...>` root ending in `</svg>`.
    pub fn finish(self, svg: String, title: &str) -> String {
        let mut svg = svg;
        if let Some(end) = svg.rfind("</svg>") {
            let overlay = format!(
                r##"<g class="tips" fill="#000" fill-opacity="0" stroke="none">{}</g>"##,
                self.shapes
            );
            svg.insert_str(end, &overlay);
        }
        if let Some(open_end) = svg
            .find("<svg")
            .and_then(|s| svg[s..].find('>').map(|e| s + e + 1))
        {
            svg.insert_str(open_end, &format!("<title>{}</title>", escape(title)));
        }
        svg
    }
}

/// Text for SVG and HTML: the five XML special characters escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A CSV field, quoted when it needs to be (RFC 4180).
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// A number for CSV and tables: empty for none, else as many decimals as
/// needed up to microsecond resolution in milliseconds.
pub fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => trimmed(x, 6),
        _ => String::new(),
    }
}

/// `x` with at most `places` decimals, trailing zeros and point dropped
/// ("100", "0.25", never "-0").
pub fn trimmed(x: f64, places: usize) -> String {
    let s = format!("{x:.places$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_owned()
    }
}
