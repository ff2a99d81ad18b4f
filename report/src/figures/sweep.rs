//! A metric over a swept parameter: per series, the mean at each value as
//! a line with markers inside a min–max band, and analytical predictions
//! (dashed) beside the measurement (Bokor Fig. 3–6).

use super::style::{self, colour, drawing, legend_marker, marker, marker_at, padded};
use super::svg::{csv_field, num, Figure, Tips};
use crate::stats::Stat;
use plotters::prelude::*;
use std::fmt::Write;

const HEIGHT: u32 = 420;

/// One measured line: a series value's statistics at each x.
pub struct Series {
    /// The series' value (its legend entry).
    pub name: String,
    /// (x, statistics of the metric at x), in x order.
    pub points: Vec<(f64, Stat)>,
}

/// An analytical prediction, drawn dashed beside a measured series.
pub struct Prediction {
    /// The legend entry (e.g. `backoff`).
    pub name: String,
    /// The [`Series::name`] it predicts, whose colour it takes.
    pub series: String,
    /// (x, predicted value), in x order.
    pub points: Vec<(f64, f64)>,
}

/// What a sweep figure says on its axes and where it is written.
pub struct SweepSpec<'a> {
    /// The title above the figure.
    pub title: &'a str,
    /// The x axis' label.
    pub x_label: &'a str,
    /// The y axis' label.
    pub y_label: &'a str,
    /// File stem in the assets folder.
    pub name: String,
}

/// Draws the series and predictions; None when there is no value to draw.
pub fn figure(
    spec: SweepSpec<'_>,
    series: &[Series],
    predictions: &[Prediction],
) -> anyhow::Result<Option<Figure>> {
    let values = series.iter().flat_map(|s| {
        s.points
            .iter()
            .flat_map(|(x, st)| [(*x, st.min), (*x, st.max), (*x, st.mean)])
    });
    let predicted = predictions
        .iter()
        .flat_map(|p| p.points.iter().map(|(x, y)| (*x, Some(*y))));
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0f64, f64::MIN);
    let mut any = false;
    for (x, y) in values.chain(predicted) {
        if let Some(y) = y {
            any = true;
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if !any {
        return Ok(None);
    }
    let title = spec.title.to_string();
    let mut tips = Tips::default();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (style::WIDTH, HEIGHT)).into_drawing_area();
        drawing(root.fill(&WHITE))?;
        let y_range = padded(y0, y1, 0.08);
        let y_range = if y0 >= 0.0 { 0.0..y_range.end } else { y_range };
        let mut chart = drawing(
            ChartBuilder::on(&root)
                .caption(&title, (style::FONT, style::TITLE_SIZE))
                .margin(10)
                .margin_right(20)
                .x_label_area_size(40)
                .y_label_area_size(80)
                .build_cartesian_2d(padded(x0, x1, 0.05), y_range),
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
        for (i, s) in series.iter().enumerate() {
            let (c, m) = (colour(i), marker(i));
            let band: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter_map(|(x, st)| Some((*x, st.max?)))
                .chain(
                    s.points
                        .iter()
                        .rev()
                        .filter_map(|(x, st)| Some((*x, st.min?))),
                )
                .collect();
            if band.len() >= 2 {
                drawing(
                    chart.draw_series(std::iter::once(Polygon::new(band, c.mix(0.18).filled()))),
                )?;
            }
            let means: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter_map(|(x, st)| Some((*x, st.mean?)))
                .collect();
            drawing(chart.draw_series(LineSeries::new(means.clone(), c.stroke_width(2))))?;
            drawing(
                chart.draw_series(
                    means
                        .iter()
                        .map(|xy| marker_at::<SVGBackend, _>(*xy, m, 5, c.filled())),
                ),
            )?
            .label(format!("{} (mean; band: min–max)", s.name))
            .legend(move |(x, y)| legend_marker((x, y), m, 5, c.filled()));
            for (x, st) in &s.points {
                if let Some(mean) = st.mean {
                    tips.point(
                        chart.backend_coord(&(*x, mean)),
                        7,
                        &format!(
                            "{} at {}: n = {}, mean {}, min {}, max {}",
                            s.name,
                            num(Some(*x)),
                            st.n,
                            num(st.mean),
                            num(st.min),
                            num(st.max)
                        ),
                    );
                }
            }
        }
        for (j, p) in predictions.iter().enumerate() {
            let i = series.iter().position(|s| s.name == p.series).unwrap_or(j);
            let c = colour(i);
            // Observed-parameter predictions dotted, configured ones dashed.
            let (dash, gap) = if p.name.contains("observed") {
                (2, 4)
            } else {
                (8, 4)
            };
            let dashed = DashedLineSeries::new(p.points.clone(), dash, gap, c.stroke_width(2));
            let legend_style = c.stroke_width(2);
            drawing(chart.draw_series(dashed))?
                .label(p.name.clone())
                .legend(move |(x, y)| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(-10, 0), (-10 + dash, 0)], legend_style)
                        + PathElement::new(
                            vec![(-10 + dash + gap, 0), (-10 + 2 * dash + gap, 0)],
                            legend_style,
                        )
                });
            for (x, y) in &p.points {
                tips.point(
                    chart.backend_coord(&(*x, *y)),
                    5,
                    &format!("{} at {}: {}", p.name, num(Some(*x)), num(Some(*y))),
                );
            }
        }
        style::legend(&mut chart)?;
        drawing(root.present())?;
    }
    let mut csv = String::from("series,x,n,mean,median,min,max,std,kind\n");
    for s in series {
        for (x, st) in &s.points {
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{},{},measured",
                csv_field(&s.name),
                num(Some(*x)),
                st.n,
                num(st.mean),
                num(st.median),
                num(st.min),
                num(st.max),
                num(st.std)
            );
        }
    }
    for p in predictions {
        for (x, y) in &p.points {
            let _ = writeln!(
                csv,
                "{},{},,{},,,,,prediction",
                csv_field(&p.name),
                num(Some(*x)),
                num(Some(*y))
            );
        }
    }
    Ok(Some(Figure {
        name: spec.name,
        caption: "Lines: mean per parameter value; shaded bands: minimum to maximum; dashed: \
                  predictions (hover for n and values)."
            .into(),
        svg: tips.finish(svg, &title),
        title,
        csv,
    }))
}
