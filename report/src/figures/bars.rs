//! One component compared across groups: a bar at the mean of each group,
//! whiskers from its minimum to its maximum, and n above (the thesis's
//! "N-run averages" drawn).

use super::style::{self, colour, drawing, padded};
use super::svg::{num, Figure, Tips};
use crate::stats::Stat;
use plotters::prelude::*;
use std::fmt::Write;

const HEIGHT: u32 = 340;

/// Draws one bar per group at its mean of `label` (in `unit`), whiskers
/// from minimum to maximum; None when no group has a value.
pub fn figure(
    groups: &[(String, Stat)],
    label: &str,
    unit: &str,
    name: String,
) -> anyhow::Result<Option<Figure>> {
    if groups.iter().all(|(_, s)| s.n == 0) {
        return Ok(None);
    }
    let (lo, hi) = groups.iter().fold((0f64, 0f64), |(lo, hi), (_, s)| {
        (lo.min(s.min.unwrap_or(0.0)), hi.max(s.max.unwrap_or(0.0)))
    });
    let y_range = padded(lo, hi, 0.12);
    let y_range = if lo >= 0.0 { 0.0..y_range.end } else { y_range };
    let n = groups.len();
    let title = format!("{label} by group");
    let unit_text = if unit.is_empty() {
        label.to_string()
    } else {
        format!("{label} ({unit})")
    };
    let names: Vec<String> = groups.iter().map(|(g, _)| g.clone()).collect();
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
                .x_label_area_size(40)
                .y_label_area_size(80)
                .build_cartesian_2d(-0.5..n as f64 - 0.5, y_range),
        )?;
        drawing(
            chart
                .configure_mesh()
                .x_label_formatter(&style::tick)
                .y_label_formatter(&style::tick)
                .disable_x_mesh()
                // Group names are written under their bars below: numeric
                // ticks would fall between groups.
                .x_labels(0)
                .x_desc("group")
                .y_desc(unit_text.as_str())
                .label_style((style::FONT, style::LABEL_SIZE))
                .light_line_style(style::LIGHT_GREY.mix(0.4))
                .max_light_lines(2)
                .draw(),
        )?;
        let bottom_y = chart.y_range().start;
        for (i, name) in names.iter().enumerate() {
            let (cx, cy) = chart.backend_coord(&(i as f64, bottom_y));
            let w = name.chars().count() as i32 * 7;
            drawing(root.draw(&Text::new(
                name.clone(),
                (cx - w / 2, cy + 6),
                (style::FONT, style::LABEL_SIZE).into_font(),
            )))?;
        }
        let half = 0.3f64.min(0.5 - 0.5 / (n as f64 + 1.0)).max(0.15);
        for (i, (group, s)) in groups.iter().enumerate() {
            let x = i as f64;
            let c = colour(i);
            let Some(mean) = s.mean else {
                let at = chart.backend_coord(&(x, 0.0));
                drawing(root.draw(&Text::new(
                    "n = 0",
                    (at.0 - 16, at.1 - 20),
                    (style::FONT, 13).into_font(),
                )))?;
                continue;
            };
            let bar = Rectangle::new([(x - half, 0.0), (x + half, mean)], c.mix(0.8).filled());
            drawing(chart.draw_series(std::iter::once(bar)))?;
            if let (Some(min), Some(max)) = (s.min, s.max) {
                let mid = x;
                let whisker = BLACK.stroke_width(2);
                drawing(chart.draw_series(std::iter::once(PathElement::new(
                    vec![(mid, min), (mid, max)],
                    whisker,
                ))))?;
                for y in [min, max] {
                    let (cx, cy) = chart.backend_coord(&(mid, y));
                    drawing(
                        root.draw(&PathElement::new(vec![(cx - 8, cy), (cx + 8, cy)], whisker)),
                    )?;
                }
                let (cx, cy) = chart.backend_coord(&(mid, max));
                drawing(root.draw(&Text::new(
                    format!("n = {}", s.n),
                    (cx + 12, cy - 6),
                    (style::FONT, 13).into_font(),
                )))?;
                let top = chart.backend_coord(&(x - half, max.max(mean).max(0.0)));
                let bottom = chart.backend_coord(&(x + half, min.min(mean).min(0.0)));
                tips.rect(
                    top,
                    bottom,
                    &format!(
                        "{group}: n = {}, mean {}, median {}, min {}, max {}, sd {}",
                        s.n,
                        num(s.mean),
                        num(s.median),
                        num(s.min),
                        num(s.max),
                        num(s.std)
                    ),
                );
            }
        }
        drawing(root.present())?;
    }
    let mut csv = String::from("group,n,mean,median,min,max,std\n");
    for (g, s) in groups {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{}",
            super::svg::csv_field(g),
            s.n,
            num(s.mean),
            num(s.median),
            num(s.min),
            num(s.max),
            num(s.std)
        );
    }
    Ok(Some(Figure {
        name,
        caption: "Bars: mean per group; whiskers: minimum to maximum; n: handovers with a value."
            .into(),
        svg: tips.finish(svg, &title),
        title,
        csv,
    }))
}
