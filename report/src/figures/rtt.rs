//! Heartbeat round-trip time over time, one series per probed path.

use super::style::{self, colour, drawing, legend_marker, marker, marker_at, padded};
use super::svg::{num, Figure, Tips};
use super::tsn::seconds;
use crate::trace::{AssociationTrace, CaptureTrace};
use plotters::prelude::*;
use std::fmt::Write;

const HEIGHT: u32 = 320;

/// Draws HEARTBEAT round-trip times (ms) against capture time, one series
/// per probed path; None when the association has no RTT sample.
pub fn figure(
    capture: &CaptureTrace,
    trace: &AssociationTrace,
    name: String,
) -> anyhow::Result<Option<Figure>> {
    let Some(origin) = capture.origin else {
        return Ok(None);
    };
    if trace.rtt.is_empty() {
        return Ok(None);
    }
    let (mut t0, mut t1, mut r1) = (f64::MAX, f64::MIN, 0f64);
    for s in &trace.rtt {
        let t = seconds(s.time, origin);
        t0 = t0.min(t);
        t1 = t1.max(t);
        r1 = r1.max(s.rtt_ms);
    }
    let title = format!("Association {} — heartbeat RTT per path", trace.id);
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
                .build_cartesian_2d(padded(t0, t1, 0.02), 0.0..padded(0.0, r1, 0.1).end),
        )?;
        drawing(
            chart
                .configure_mesh()
                .x_label_formatter(&style::tick)
                .y_label_formatter(&style::tick)
                .x_desc("time since the capture's first frame (s)")
                .y_desc("RTT (ms)")
                .label_style((style::FONT, style::LABEL_SIZE))
                .light_line_style(style::LIGHT_GREY.mix(0.4))
                .max_light_lines(2)
                .draw(),
        )?;
        for (i, p) in trace.paths.iter().enumerate() {
            let points: Vec<(f64, f64)> = trace
                .rtt
                .iter()
                .filter(|s| s.path == p.id)
                .map(|s| (seconds(s.time, origin), s.rtt_ms))
                .collect();
            if points.is_empty() {
                continue;
            }
            let (c, m) = (colour(i), marker(i));
            drawing(chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(1))))?;
            drawing(
                chart.draw_series(
                    points
                        .into_iter()
                        .map(|xy| marker_at::<SVGBackend, _>(xy, m, 4, c.filled())),
                ),
            )?
            .label(format!("path {}: {} → {}", p.id, p.src, p.dst))
            .legend(move |(x, y)| legend_marker((x, y), m, 4, c.filled()));
        }
        style::legend(&mut chart)?;
        for s in &trace.rtt {
            let xy = chart.backend_coord(&(seconds(s.time, origin), s.rtt_ms));
            tips.point(
                xy,
                5,
                &format!(
                    "frames {} → {}: RTT {} ms on path {}",
                    s.request_frame.map_or("?".into(), |f| f.to_string()),
                    s.frame,
                    num(Some(s.rtt_ms)),
                    s.path
                ),
            );
        }
        drawing(root.present())?;
    }
    let mut csv = String::from("path,request_frame,ack_frame,time_s,rtt_ms\n");
    for s in &trace.rtt {
        let _ = writeln!(
            csv,
            "{},{},{},{},{}",
            s.path,
            s.request_frame.map_or(String::new(), |f| f.to_string()),
            s.frame,
            num(Some(seconds(s.time, origin))),
            num(Some(s.rtt_ms))
        );
    }
    Ok(Some(Figure {
        name,
        caption: "Round-trip time of each answered HEARTBEAT, on the path it probed (Linux \
                  answers from its primary source, so an alternate path's RTT can mix two paths)."
            .into(),
        svg: tips.finish(svg, &title),
        title,
        csv,
    }))
}
