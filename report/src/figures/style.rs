//! One look for every figure: the Okabe–Ito palette (distinguishable with
//! the common colour-vision deficiencies), a marker shape per series so
//! that colour is never the only cue, and sizes that fit a laptop screen.

use plotters::style::RGBColor;

/// Okabe & Ito (2008), without yellow (too light on white).
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
];

/// Secondary lines and text (axes' labels, reference marks).
pub const GREY: RGBColor = RGBColor(0x77, 0x77, 0x77);
/// Grid lines and backgrounds.
pub const LIGHT_GREY: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);

/// The palette's colour for series `i` (cycled).
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Marker shapes, cycled with the colours (offset so that colour and shape
/// do not repeat together).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A circle.
    Circle,
    /// A triangle pointing up.
    Triangle,
    /// A square.
    Square,
    /// A diamond.
    Diamond,
}

/// The marker shape for series `i` (cycled).
pub fn marker(i: usize) -> Marker {
    [
        Marker::Circle,
        Marker::Triangle,
        Marker::Square,
        Marker::Diamond,
    ][i % 4]
}

/// Figure width in pixels: readable at laptop width beside the page margin.
pub const WIDTH: u32 = 960;

/// The font family of every text in the figures.
pub const FONT: &str = "sans-serif";
/// Figure titles' font size, in pixels.
pub const TITLE_SIZE: u32 = 18;
/// Axis labels' font size, in pixels.
pub const LABEL_SIZE: u32 = 14;

/// The colour as `#RRGGBB`, for SVG attributes.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

use plotters::prelude::*;

/// The outline of a marker around (0, 0), `s` pixels from its centre.
pub fn marker_outline(shape: Marker, s: i32) -> Vec<(i32, i32)> {
    match shape {
        Marker::Circle => (0..12)
            .map(|i| {
                let a = f64::from(i) * std::f64::consts::PI / 6.0;
                let r = f64::from(s);
                ((r * a.cos()).round() as i32, (r * a.sin()).round() as i32)
            })
            .collect(),
        Marker::Triangle => vec![(0, -s - 1), (s + 1, s), (-s - 1, s)],
        Marker::Square => vec![(-s, -s), (s, -s), (s, s), (-s, s)],
        Marker::Diamond => vec![(0, -s - 1), (s + 1, 0), (0, s + 1), (-s - 1, 0)],
    }
}

/// A marker at a data coordinate (one element type for every shape).
pub fn marker_at<DB: DrawingBackend, C>(
    at: C,
    shape: Marker,
    size: i32,
    style: ShapeStyle,
) -> <EmptyElement<C, DB> as std::ops::Add<Polygon<(i32, i32)>>>::Output {
    EmptyElement::at(at) + Polygon::new(marker_outline(shape, size), style)
}

/// The same marker in a legend, at backend coordinates.
pub fn legend_marker(
    (x, y): (i32, i32),
    shape: Marker,
    size: i32,
    style: ShapeStyle,
) -> Polygon<(i32, i32)> {
    Polygon::new(
        marker_outline(shape, size)
            .into_iter()
            .map(|(dx, dy)| (x + dx, y + dy))
            .collect::<Vec<_>>(),
        style,
    )
}

/// A retransmission: an "×" in the colour of its path.
pub fn cross_at(at: (f64, f64), size: i32, colour: RGBColor) -> Cross<(f64, f64), i32> {
    Cross::new(at, size, colour.stroke_width(2))
}

/// Plotters' errors carry the backend's error type; reports only need
/// their message.
pub fn drawing<T, E: std::fmt::Display>(r: Result<T, E>) -> anyhow::Result<T> {
    r.map_err(|e| anyhow::anyhow!("drawing a figure: {e}"))
}

/// A range with a margin, never empty.
pub fn padded(lo: f64, hi: f64, fraction: f64) -> std::ops::Range<f64> {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && lo <= hi {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let span = if hi - lo > 0.0 {
        hi - lo
    } else {
        lo.abs().max(1.0)
    };
    (lo - span * fraction)..(hi + span * fraction)
}

/// An axis tick: integers without a decimal point, others with at most
/// three decimals ("100", "0.25", "-1200").
pub fn tick(v: &f64) -> String {
    super::svg::trimmed(*v, 3)
}

/// The legend of a chart's labelled series, the same in every figure:
/// upper left, on a translucent white box.
pub fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> anyhow::Result<()> {
    drawing(
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(GREY)
            .label_font((FONT, 13))
            .draw(),
    )
}
