//! One-way delay per path over time, from two capture points
//! (`analyze --point`, docs/points.md), with both points' handover events
//! on the same time axis: each point's switch and the moving ASCONF's
//! departure, arrival and answer, at the point that saw each.

use super::style::{self, colour, drawing, legend_marker, marker, marker_at, padded};
use super::svg::{num, Figure, Tips};
use plotters::prelude::*;
use std::fmt::Write;

const HEIGHT: u32 = 480;
/// Label rows above the delays, so that events close in time stay
/// readable.
const LABEL_ROWS: usize = 10;
/// Width of a label's character at 11 px (plotters' own estimate for
/// sans-serif is about this; a margin keeps neighbours apart).
const LABEL_CHAR_PX: i32 = 6;

/// One path and direction's delays: (time on the first point's clock, ns
/// since the epoch; one-way delay, ms).
#[derive(Debug, Clone)]
pub struct OwdPath {
    /// e.g. `cn→mn 198.51.100.100 → 198.51.100.101`.
    pub label: String,
    /// (capture time on the first point's clock in ns since the epoch,
    /// one-way delay in ms), in time order.
    pub points: Vec<(i64, f64)>,
}

/// An event at one point (first point's clock).
#[derive(Debug, Clone)]
pub struct Mark {
    /// When it happened, on the first point's clock, in ns since the epoch.
    pub time_ns: i64,
    /// 0 or 1: the point that saw it; it decides the line's look.
    pub point: usize,
    /// e.g. `mn: switch (frame 81)`.
    pub label: String,
}

/// Seconds since `origin_ns`.
fn since(t: i64, origin_ns: i64) -> f64 {
    (t - origin_ns) as f64 / 1e9
}

/// The figure; `origin_ns` is time 0 of its axis (the first point's clock).
pub fn figure(
    name: String,
    point_names: [&str; 2],
    origin_ns: i64,
    paths: &[OwdPath],
    marks: &[Mark],
) -> anyhow::Result<Figure> {
    let (mut t0, mut t1, mut d1) = (f64::MAX, f64::MIN, 0f64);
    for p in paths {
        for &(t, d) in &p.points {
            let t = since(t, origin_ns);
            t0 = t0.min(t);
            t1 = t1.max(t);
            d1 = d1.max(d);
        }
    }
    for m in marks {
        let t = since(m.time_ns, origin_ns);
        t0 = t0.min(t);
        t1 = t1.max(t);
    }
    // The delays take the lower half, the events' labels the upper one.
    let y = 0.0..padded(0.0, d1, 0.05).end * 2.0;
    let title = format!(
        "One-way delay per path, {} and {} on one clock",
        point_names[0], point_names[1]
    );
    // The two points' events: black solid at the first, vermillion at the
    // second (and its name in every label: colour is not the only cue).
    let mark_colour = |point: usize| if point == 0 { colour(6) } else { colour(4) };
    let mut tips = Tips::default();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (style::WIDTH, HEIGHT)).into_drawing_area();
        drawing(root.fill(&WHITE))?;
        let mut chart = drawing(
            ChartBuilder::on(&root)
                .caption(&title, (style::FONT, style::TITLE_SIZE))
                .margin(10)
                .margin_right(20)
                .x_label_area_size(36)
                .y_label_area_size(80)
                .build_cartesian_2d(padded(t0, t1, 0.02), y.clone()),
        )?;
        drawing(
            chart
                .configure_mesh()
                .x_label_formatter(&style::tick)
                .y_label_formatter(&style::tick)
                .x_desc(format!(
                    "time since {}'s first SCTP packet, on its clock (s)",
                    point_names[0]
                ))
                .y_desc("one-way delay (ms)")
                .label_style((style::FONT, style::LABEL_SIZE))
                .light_line_style(style::LIGHT_GREY.mix(0.4))
                .max_light_lines(2)
                .draw(),
        )?;
        // Events first, under the delays; their lines before any label,
        // so that no line crosses a label.
        for m in marks {
            let t = since(m.time_ns, origin_ns);
            drawing(chart.draw_series(LineSeries::new(
                [(t, y.start), (t, y.end)],
                mark_colour(m.point).mix(0.6).stroke_width(1),
            )))?;
        }
        // Each label goes in the first row where it does not run into the
        // previous label of that row; with no such row it is left out (the
        // event keeps its line, its tooltip and its CSV row).
        let mut row_ends = [i32::MIN; LABEL_ROWS];
        for m in marks {
            let t = since(m.time_ns, origin_ns);
            let c = mark_colour(m.point);
            let x = chart.backend_coord(&(t, y.end)).0;
            let width =
                LABEL_CHAR_PX * i32::try_from(m.label.chars().count()).unwrap_or(i32::MAX / 8);
            if let Some(row) = row_ends.iter().position(|&end| end.saturating_add(4) <= x) {
                row_ends[row] = x.saturating_add(width);
                let level = y.end * (0.97 - 0.045 * row as f64);
                drawing(chart.draw_series(std::iter::once(Text::new(
                    m.label.clone(),
                    (t, level),
                    (style::FONT, 11).into_font().color(&c),
                ))))?;
            }
            let top = chart.backend_coord(&(t, y.end));
            let bottom = chart.backend_coord(&(t, y.start));
            tips.rect(
                (top.0 - 2, top.1),
                (bottom.0 + 2, bottom.1),
                &format!("{} at {} s", m.label, num(Some(t))),
            );
        }
        for (i, p) in paths.iter().enumerate() {
            if p.points.is_empty() {
                continue;
            }
            let xy: Vec<(f64, f64)> = p
                .points
                .iter()
                .map(|&(t, d)| (since(t, origin_ns), d))
                .collect();
            let (c, m) = (colour(i), marker(i));
            drawing(chart.draw_series(LineSeries::new(xy.clone(), c.stroke_width(1))))?;
            drawing(
                chart.draw_series(
                    xy.iter()
                        .map(|&at| marker_at::<SVGBackend, _>(at, m, 3, c.filled())),
                ),
            )?
            .label(p.label.clone())
            .legend(move |(x, y)| legend_marker((x, y), m, 4, c.filled()));
            for &at in &xy {
                tips.point(
                    chart.backend_coord(&at),
                    4,
                    &format!(
                        "{}: {} ms at {} s",
                        p.label,
                        num(Some(at.1)),
                        num(Some(at.0))
                    ),
                );
            }
        }
        for (point, name) in point_names.iter().enumerate() {
            let c = mark_colour(point);
            drawing(chart.draw_series(std::iter::empty::<PathElement<(f64, f64)>>()))?
                .label(format!("events seen at {name}"))
                .legend(move |(x, y)| {
                    PathElement::new([(x - 6, y), (x + 6, y)], c.stroke_width(2))
                });
        }
        // Upper right, not the house style's upper left: the event labels
        // start at the events, mid-capture, and run right.
        drawing(
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(style::GREY)
                .label_font((style::FONT, 13))
                .draw(),
        )?;
        drawing(root.present())?;
    }
    let mut csv = String::from("series,time_s,one_way_delay_ms,event\n");
    for p in paths {
        for &(t, d) in &p.points {
            let _ = writeln!(
                csv,
                "\"{}\",{},{},",
                p.label,
                num(Some(since(t, origin_ns))),
                num(Some(d))
            );
        }
    }
    for m in marks {
        let _ = writeln!(
            csv,
            "\"events seen at {}\",{},,\"{}\"",
            point_names[m.point.min(1)],
            num(Some(since(m.time_ns, origin_ns))),
            m.label
        );
    }
    Ok(Figure {
        name,
        caption: format!(
            "One-way delay of every packet seen at both points, per path and direction, on {}'s \
             clock (the other point's times carried onto it by the estimated offset and drift); \
             vertical lines: each handover's events at the point that saw them (a label that \
             would run into another is left out; every event is in the data and in its tooltip).",
            point_names[0]
        ),
        svg: tips.finish(svg, &title),
        title,
        csv,
    })
}
