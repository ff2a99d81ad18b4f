//! One handover's latency components as horizontal bars on one time line
//! (milliseconds from the switch frame), so a reader sees where the time
//! went: each bar runs from the point the component starts at to the point
//! it ends at; components that cannot be computed are listed with their
//! reason in the table beneath instead.

use super::style::{self, colour, drawing, padded};
use super::svg::{csv_field, num, Figure, Tips};
use crate::components::latency;
use plotters::prelude::*;
use sctp_handover::handover::{Handover, Point};
use std::fmt::Write;

fn point_text(p: &Point) -> String {
    match p.frame {
        Some(f) => format!("frame {f} ({})", p.what),
        None => format!("event log: {}", p.what),
    }
}

/// Draws the handover's latency components as bars on one time line, in
/// ms from the switch; None when no component could be computed.
pub fn figure(h: &Handover, name: String, title: String) -> anyhow::Result<Option<Figure>> {
    let origin = h.switch_time;
    let ms = |p: &Point| p.time.since(origin).as_millis_f64();
    let bars: Vec<(&'static str, f64, f64, &Point, &Point, f64)> = latency()
        .iter()
        .filter_map(|def| {
            let c = (def.get)(h)?;
            let (from, to, value) = (c.from.as_ref()?, c.to.as_ref()?, c.ms?);
            Some((def.label, ms(from), ms(to), from, to, value))
        })
        .collect();
    if bars.is_empty() {
        return Ok(None);
    }
    let (lo, hi) = bars.iter().fold((0f64, 0f64), |(lo, hi), b| {
        (lo.min(b.1).min(b.2), hi.max(b.1).max(b.2))
    });
    let rows = bars.len();
    let height = 90 + 34 * rows as u32;
    let labels: Vec<&'static str> = bars.iter().map(|b| b.0).collect();
    let mut tips = Tips::default();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (style::WIDTH, height)).into_drawing_area();
        drawing(root.fill(&WHITE))?;
        let mut chart = drawing(
            ChartBuilder::on(&root)
                .caption(&title, (style::FONT, style::TITLE_SIZE))
                .margin(10)
                .margin_right(30)
                .x_label_area_size(36)
                .y_label_area_size(190)
                .build_cartesian_2d(
                    {
                        // Room on the right for the value labels.
                        let r = padded(lo, hi, 0.04);
                        r.start..r.end + (r.end - r.start) * 0.12
                    },
                    -0.5..rows as f64 - 0.5,
                ),
        )?;
        let n = rows as f64;
        drawing(
            chart
                .configure_mesh()
                .x_label_formatter(&style::tick)
                .disable_y_mesh()
                .y_labels(rows)
                .y_label_formatter(&|v| {
                    let i = n - 1.0 - v;
                    if (i - i.round()).abs() < 0.01 && i >= -0.01 {
                        labels
                            .get(i.round() as usize)
                            .copied()
                            .unwrap_or("")
                            .to_string()
                    } else {
                        String::new()
                    }
                })
                .x_desc("time relative to the switch frame (ms)")
                .label_style((style::FONT, style::LABEL_SIZE))
                .light_line_style(style::LIGHT_GREY.mix(0.4))
                .max_light_lines(2)
                .draw(),
        )?;
        let y_range = chart.y_range();
        drawing(chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, y_range.start), (0.0, y_range.end)],
            BLACK.mix(0.5).stroke_width(1),
        ))))?;
        for (i, (label, from, to, fp, tp, value)) in bars.iter().enumerate() {
            let y = n - 1.0 - i as f64;
            // One colour per component in every handover's time line.
            let c = colour(
                latency()
                    .iter()
                    .position(|d| d.label == *label)
                    .unwrap_or(i),
            );
            let (x0, x1) = (from.min(*to), from.max(*to));
            let negative = *value < 0.0;
            // A negative component (its end before its start) is drawn
            // hollow with a dashed outline, so it never reads as a duration.
            drawing(chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, y - 0.32), (x1, y + 0.32)],
                if negative {
                    c.mix(0.15).filled()
                } else {
                    c.mix(0.85).filled()
                },
            ))))?;
            if negative {
                drawing(chart.draw_series(DashedLineSeries::new(
                    [
                        (x0, y - 0.32),
                        (x1, y - 0.32),
                        (x1, y + 0.32),
                        (x0, y + 0.32),
                        (x0, y - 0.32),
                    ],
                    5,
                    3,
                    c.stroke_width(1),
                )))?;
            }
            // A zero-length component still shows as a tick.
            drawing(chart.draw_series(std::iter::once(PathElement::new(
                vec![(*to, y - 0.4), (*to, y + 0.4)],
                c.stroke_width(2),
            ))))?;
            drawing(chart.draw_series(std::iter::once(Text::new(
                if negative {
                    format!(" {value:.3} ms (negative)")
                } else {
                    format!(" {value:.3} ms")
                },
                (x1, y + 0.1),
                (style::FONT, 12).into_font(),
            ))))?;
            let a = chart.backend_coord(&(x0, y - 0.4));
            let b = chart.backend_coord(&(x1, y + 0.4));
            tips.rect(
                a,
                b,
                &format!(
                    "{label}: {} ms, from {} to {}",
                    num(Some(*value)),
                    point_text(fp),
                    point_text(tp)
                ),
            );
        }
        drawing(root.present())?;
    }
    let mut csv = String::from("component,ms,start_ms,end_ms,from_frame,to_frame,from,to\n");
    for (label, from, to, fp, tp, value) in &bars {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{}",
            csv_field(label),
            num(Some(*value)),
            num(Some(*from)),
            num(Some(*to)),
            fp.frame.map_or(String::new(), |f| f.to_string()),
            tp.frame.map_or(String::new(), |f| f.to_string()),
            csv_field(fp.what),
            csv_field(tp.what)
        );
    }
    Ok(Some(Figure {
        name,
        caption: "Each bar runs from the point a component starts at to the point it ends at; a hollow dashed bar is a negative component (it ends before it starts) \
                  (hover for the frames); 0 is the switch frame, the first new DATA on the new path."
            .into(),
        svg: tips.finish(svg, &title),
        title,
        csv,
    }))
}
