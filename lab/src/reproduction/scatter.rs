//! Points against time, one colour and marker shape per series (the
//! TSN-against-time figures of Bokor's Fig. 2 and Honda's Figs. 5.2–5.5),
//! with the run's scripted events as labelled vertical lines.

use crate::figures::style::{self, colour, drawing, legend_marker, marker, marker_at, padded};
use crate::figures::svg::{csv_field, num, Figure, Tips};
use plotters::prelude::*;
use std::fmt::Write;

const HEIGHT: u32 = 420;

pub struct Points {
    pub name: String,
    /// (x, y, frame) in x order.
    pub points: Vec<(f64, f64, u64)>,
}

pub struct Spec<'a> {
    pub name: String,
    pub title: String,
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// Vertical lines: (x, label).
    pub events: Vec<(f64, String)>,
    pub caption: String,
}

pub fn figure(spec: Spec<'_>, series: &[Points]) -> anyhow::Result<Option<Figure>> {
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    let mut any = false;
    for (x, y, _) in all {
        any = true;
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    if !any {
        return Ok(None);
    }
    for (x, _) in &spec.events {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
    }
    let mut tips = Tips::default();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (style::WIDTH, HEIGHT)).into_drawing_area();
        drawing(root.fill(&WHITE))?;
        let y_range = padded(y0, y1, 0.05);
        let mut chart = drawing(
            ChartBuilder::on(&root)
                .caption(&spec.title, (style::FONT, style::TITLE_SIZE))
                .margin(10)
                .margin_right(20)
                .x_label_area_size(40)
                .y_label_area_size(80)
                .build_cartesian_2d(padded(x0, x1, 0.03), y_range.clone()),
        )?;
        drawing(
            chart
                .configure_mesh()
                .x_label_formatter(&style::tick)
                .y_label_formatter(&style::tick)
                .x_desc(spec.x_label)
                .y_desc(spec.y_label)
                .label_style((style::FONT, style::LABEL_SIZE))
                .light_line_style(style::LIGHT_GREY.mix(0.4))
                .max_light_lines(2)
                .draw(),
        )?;
        for (x, label) in &spec.events {
            drawing(chart.draw_series(DashedLineSeries::new(
                vec![(*x, y_range.start), (*x, y_range.end)],
                6,
                4,
                style::GREY.stroke_width(1),
            )))?;
            drawing(chart.draw_series(std::iter::once(Text::new(
                label.clone(),
                (*x, y_range.end),
                (style::FONT, 12).into_font().color(&style::GREY),
            ))))?;
        }
        for (i, s) in series.iter().enumerate() {
            let (c, m) = (colour(i), marker(i));
            drawing(
                chart.draw_series(
                    s.points
                        .iter()
                        .map(|(x, y, _)| marker_at::<SVGBackend, _>((*x, *y), m, 3, c.filled())),
                ),
            )?
            .label(s.name.clone())
            .legend(move |(x, y)| legend_marker((x, y), m, 5, c.filled()));
            for (x, y, frame) in &s.points {
                tips.point(
                    chart.backend_coord(&(*x, *y)),
                    4,
                    &format!(
                        "{}: frame {frame}, {} s, {}",
                        s.name,
                        num(Some(*x)),
                        num(Some(*y))
                    ),
                );
            }
        }
        style::legend(&mut chart)?;
        drawing(root.present())?;
    }
    let mut csv = String::from("series,x,y,frame\n");
    for s in series {
        for (x, y, frame) in &s.points {
            let _ = writeln!(
                csv,
                "{},{},{},{frame}",
                csv_field(&s.name),
                num(Some(*x)),
                num(Some(*y))
            );
        }
    }
    for (x, label) in &spec.events {
        let _ = writeln!(
            csv,
            "{},{},,",
            csv_field(&format!("event: {label}")),
            num(Some(*x))
        );
    }
    Ok(Some(Figure {
        name: spec.name,
        caption: spec.caption,
        svg: tips.finish(svg, &spec.title),
        title: spec.title,
        csv,
    }))
}
