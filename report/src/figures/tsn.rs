//! TSN versus time for one data direction (Bokor Fig. 7–8, Koh & Kim's
//! traces): new DATA by path (colour and shape), retransmissions as "×",
//! the SACKs' cumulative TSN ack as a step line, path switches as vertical
//! lines; beneath, on the same time axis, one lane per kind of event.

use super::style::{self, colour, cross_at, drawing, legend_marker, marker, marker_at, padded};
use super::svg::{num, Figure, Tips};
use crate::trace::{AssociationTrace, CaptureTrace, DirectionTrace};
use plotters::prelude::*;
use sctp_handover::events::{EventKind, PathId};
use sctp_handover::handover::anchors::Anchor;
use sctp_handover::time::Timestamp;
use sctp_handover::wire::sctp_param::AsconfOp;
use std::fmt::Write;

const HEIGHT: u32 = 620;
const CHART_HEIGHT: u32 = 430;

/// The event lanes, top to bottom.
const LANES: [&str; 7] = [
    "ASCONF",
    "ASCONF-ACK",
    "HEARTBEAT",
    "HB ACK",
    "switch / T3",
    "path state",
    "link / addr",
];

struct Mark {
    lane: usize,
    time: f64,
    text: String,
    colour: RGBColor,
}

/// Seconds from `origin` to `t` (negative before it).
pub fn seconds(t: Timestamp, origin: Timestamp) -> f64 {
    t.since(origin).as_millis_f64() / 1000.0
}

fn path_colour(trace: &AssociationTrace, path: PathId) -> (RGBColor, style::Marker) {
    let i = trace
        .paths
        .iter()
        .position(|p| p.id == path)
        .unwrap_or(usize::from(path));
    (colour(i), marker(i))
}

fn event_marks(
    trace: &AssociationTrace,
    sender: usize,
    anchors: &[Anchor],
    origin: Timestamp,
) -> (Vec<Mark>, Vec<(f64, String)>) {
    // ASCONFs also get a short label (ADD, SET, DEL) beside their tick.
    let mut asconf_labels = Vec::new();
    let mut marks = Vec::new();
    let mut mark = |lane: usize, time: Timestamp, text: String, colour: RGBColor| {
        marks.push(Mark {
            lane,
            time: seconds(time, origin),
            text,
            colour,
        })
    };
    let path_name = |p: PathId| {
        trace
            .paths
            .iter()
            .find(|x| x.id == p)
            .map(|x| format!("path {p} ({} → {})", x.src, x.dst))
            .unwrap_or_else(|| format!("path {p}"))
    };
    for e in &trace.events {
        let f = e.frame;
        match &e.kind {
            EventKind::Asconf {
                path,
                serial,
                requests,
                retransmission,
                ..
            } => {
                let ops: Vec<String> = requests
                    .iter()
                    .map(|r| format!("{} {}", r.op.name(), r.address))
                    .collect();
                let short: Vec<&str> = requests
                    .iter()
                    .map(|r| match r.op {
                        AsconfOp::AddIp => "ADD",
                        AsconfOp::DeleteIp => "DEL",
                        AsconfOp::SetPrimary => "SET",
                    })
                    .collect();
                asconf_labels.push((seconds(e.time, origin), short.join("+")));
                mark(
                    0,
                    e.time,
                    format!(
                        "frame {f}: ASCONF serial {serial}{} on {}: {}",
                        if *retransmission {
                            " (retransmission)"
                        } else {
                            ""
                        },
                        path_name(*path),
                        ops.join(", ")
                    ),
                    path_colour(trace, *path).0,
                )
            }
            EventKind::AsconfAck {
                path,
                serial,
                request_frame,
                rtt_ms,
                ..
            } => mark(
                1,
                e.time,
                format!(
                    "frame {f}: ASCONF-ACK serial {serial} for frame {}, RTT {} ms",
                    request_frame.map_or("?".into(), |x| x.to_string()),
                    num(*rtt_ms)
                ),
                path_colour(trace, *path).0,
            ),
            EventKind::Heartbeat {
                path,
                previous_unanswered,
            } => mark(
                2,
                e.time,
                format!(
                    "frame {f}: HEARTBEAT on {}{}",
                    path_name(*path),
                    if *previous_unanswered {
                        " (previous one unanswered)"
                    } else {
                        ""
                    }
                ),
                path_colour(trace, *path).0,
            ),
            EventKind::HeartbeatAck {
                path,
                request_frame,
                rtt_ms,
                ..
            } => mark(
                3,
                e.time,
                format!(
                    "frame {f}: HEARTBEAT ACK for frame {} on {}, RTT {} ms",
                    request_frame.map_or("?".into(), |x| x.to_string()),
                    path_name(*path),
                    num(*rtt_ms)
                ),
                path_colour(trace, *path).0,
            ),
            EventKind::DataPathChange {
                sender: s,
                from_path,
                to_path,
                tsn,
            } if *s == sender => mark(
                4,
                e.time,
                match from_path {
                    Some(p) => format!(
                        "frame {f}: new DATA (TSN {tsn}) moves from path {p} to {}",
                        path_name(*to_path)
                    ),
                    None => format!(
                        "frame {f}: DATA starts (TSN {tsn}) on {}",
                        path_name(*to_path)
                    ),
                },
                path_colour(trace, *to_path).0,
            ),
            EventKind::PathInactive { path, error_count } => mark(
                5,
                e.time,
                format!(
                    "frame {f}: {} inferred inactive (error count {error_count})",
                    path_name(*path)
                ),
                path_colour(trace, *path).0,
            ),
            EventKind::PathActive { path } => mark(
                5,
                e.time,
                format!("frame {f}: {} inferred active", path_name(*path)),
                path_colour(trace, *path).0,
            ),
            EventKind::PathPotentiallyFailed { path, error_count } => mark(
                5,
                e.time,
                format!(
                    "frame {f}: {} inferred potentially failed (RFC 7829; error count {error_count})",
                    path_name(*path)
                ),
                path_colour(trace, *path).0,
            ),
            EventKind::SpuriousExpiry {
                path, expiry_frame, ..
            } => mark(
                4,
                e.time,
                format!(
                    "frame {f}: the T3 expiry of {} at frame {expiry_frame} was spurious",
                    path_name(*path)
                ),
                path_colour(trace, *path).0,
            ),
            _ => {}
        }
    }
    for h in trace.handovers.iter().filter(|h| h.sender == sender) {
        if let Some(fo) = &h.failover {
            for (i, x) in fo.expiries.iter().enumerate() {
                mark(
                    4,
                    x.time,
                    format!(
                        "frame {}: T3 expiry {} on path {} (TSN {}, {} retransmissions)",
                        x.frame,
                        i + 1,
                        h.from_path,
                        x.first_tsn,
                        x.retransmissions
                    ),
                    style::PALETTE[4],
                );
            }
        }
    }
    // Only the event log's moments within the association's life.
    for a in anchors
        .iter()
        .filter(|a| a.time >= trace.first_time && a.time <= trace.last_time)
    {
        let what = match a.kind {
            sctp_handover::handover::anchors::AnchorKind::LinkDown => "link down",
            sctp_handover::handover::anchors::AnchorKind::LinkUp => "link up",
            sctp_handover::handover::anchors::AnchorKind::AddrUp => "address up",
            sctp_handover::handover::anchors::AnchorKind::AddrDown => "address down",
        };
        let mut text = format!("event log: {what}");
        if let Some(i) = &a.interface {
            let _ = write!(text, " {i}");
        }
        if let Some(ad) = a.address {
            let _ = write!(text, " {ad}");
        }
        mark(6, a.time, text, style::GREY);
    }
    (marks, asconf_labels)
}

fn relative(tsn: u32, base: u32) -> f64 {
    f64::from(tsn.wrapping_sub(base) as i32)
}

/// The figure for DATA sent by endpoint `sender`, or None without DATA.
pub fn figure(
    capture: &CaptureTrace,
    trace: &AssociationTrace,
    sender: usize,
    anchors: &[Anchor],
    name: String,
) -> anyhow::Result<Option<Figure>> {
    let dir: &DirectionTrace = &trace.directions[sender];
    let (Some(base), Some(origin)) = (dir.base_tsn(), capture.origin) else {
        return Ok(None);
    };
    let (marks, asconf_labels) = event_marks(trace, sender, anchors, origin);
    let data = dir
        .new_data
        .points
        .iter()
        .map(|p| (p, false))
        .chain(dir.retransmissions.points.iter().map(|p| (p, true)));
    let (mut t0, mut t1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (p, _) in data.clone() {
        let (t, y) = (seconds(p.time, origin), relative(p.tsn, base));
        t0 = t0.min(t);
        t1 = t1.max(t);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    for m in &marks {
        t0 = t0.min(m.time);
        t1 = t1.max(m.time);
    }
    for a in &dir.cumulative_acks.points {
        let (t, y) = (seconds(a.time, origin), relative(a.tsn, base));
        t0 = t0.min(t);
        t1 = t1.max(t);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    let x_range = padded(t0, t1, 0.02);
    let y_range = padded(y0, y1, 0.04);
    let endpoint = &trace.paths.iter().find(|p| p.sender == sender);
    let title = format!(
        "Association {} — DATA from endpoint {sender}{}",
        trace.id,
        endpoint.map_or(String::new(), |p| format!(" ({})", p.src))
    );
    let mut tips = Tips::default();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (style::WIDTH, HEIGHT)).into_drawing_area();
        drawing(root.fill(&WHITE))?;
        let (upper, lower) = root.split_vertically(CHART_HEIGHT);
        let mut chart = drawing(
            ChartBuilder::on(&upper)
                .caption(&title, (style::FONT, style::TITLE_SIZE))
                .margin(10)
                .margin_right(20)
                .x_label_area_size(36)
                .y_label_area_size(80)
                .build_cartesian_2d(x_range.clone(), y_range),
        )?;
        drawing(
            chart
                .configure_mesh()
                .x_label_formatter(&style::tick)
                .y_label_formatter(&style::tick)
                .x_desc("time since the capture's first frame (s)")
                .y_desc(format!("TSN − {base}"))
                .label_style((style::FONT, style::LABEL_SIZE))
                .light_line_style(style::LIGHT_GREY.mix(0.4))
                .max_light_lines(2)
                .draw(),
        )?;
        // Path switches across the whole chart.
        for h in trace.handovers.iter().filter(|h| h.sender == sender) {
            let t = seconds(h.switch_time, origin);
            let (c, _) = path_colour(trace, h.to_path);
            let (lo, hi) = (chart.y_range().start, chart.y_range().end);
            drawing(chart.draw_series(std::iter::once(PathElement::new(
                vec![(t, lo), (t, hi)],
                c.mix(0.6).stroke_width(1),
            ))))?;
        }
        // The cumulative TSN ack: a step line.
        let acks = &dir.cumulative_acks.points;
        if !acks.is_empty() {
            let mut steps = Vec::with_capacity(acks.len() * 2);
            for (i, a) in acks.iter().enumerate() {
                let t = seconds(a.time, origin);
                if i > 0 {
                    steps.push((t, relative(acks[i - 1].tsn, base)));
                }
                steps.push((t, relative(a.tsn, base)));
            }
            drawing(chart.draw_series(LineSeries::new(steps, BLACK.mix(0.7).stroke_width(1))))?
                .label("SACK cumulative TSN ack")
                .legend(|(x, y)| PathElement::new(vec![(x - 8, y), (x + 8, y)], BLACK));
        }
        for (i, p) in trace.paths.iter().enumerate() {
            let (c, m) = (colour(i), marker(i));
            let points: Vec<(f64, f64)> = dir
                .new_data
                .points
                .iter()
                .filter(|d| d.path == p.id)
                .map(|d| (seconds(d.time, origin), relative(d.tsn, base)))
                .collect();
            if points.is_empty() {
                continue;
            }
            drawing(
                chart.draw_series(
                    points
                        .into_iter()
                        .map(|xy| marker_at::<SVGBackend, _>(xy, m, 3, c.filled())),
                ),
            )?
            .label(format!("new DATA, path {}: {} → {}", p.id, p.src, p.dst))
            .legend(move |(x, y)| legend_marker((x, y), m, 4, c.filled()));
        }
        let retransmissions = &dir.retransmissions.points;
        if !retransmissions.is_empty() {
            let mut legend_done = false;
            for (i, p) in trace.paths.iter().enumerate() {
                let c = colour(i);
                let points: Vec<(f64, f64)> = retransmissions
                    .iter()
                    .filter(|d| d.path == p.id)
                    .map(|d| (seconds(d.time, origin), relative(d.tsn, base)))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let series =
                    drawing(chart.draw_series(points.into_iter().map(|xy| cross_at(xy, 5, c))))?;
                if !legend_done {
                    legend_done = true;
                    series
                        .label("retransmitted DATA (× in its path's colour)")
                        .legend(|(x, y)| Cross::new((x, y), 5, BLACK.stroke_width(2)));
                }
            }
        }
        style::legend(&mut chart)?;
        for (p, retransmitted) in dir
            .new_data
            .points
            .iter()
            .map(|p| (p, false))
            .chain(retransmissions.iter().map(|p| (p, true)))
        {
            let xy = chart.backend_coord(&(seconds(p.time, origin), relative(p.tsn, base)));
            tips.point(
                xy,
                4,
                &format!(
                    "frame {}: {} TSN {} on path {} at {:.6} s",
                    p.frame,
                    if retransmitted {
                        "retransmitted"
                    } else {
                        "new"
                    },
                    p.tsn,
                    p.path,
                    seconds(p.time, origin)
                ),
            );
        }
        for a in acks {
            let xy = chart.backend_coord(&(seconds(a.time, origin), relative(a.tsn, base)));
            tips.point(
                xy,
                3,
                &format!("frame {}: SACK cumulative TSN ack {}", a.frame, a.tsn),
            );
        }

        // Event lanes on the same time axis.
        let lanes = LANES.len() as f64;
        let mut lane_chart = drawing(
            ChartBuilder::on(&lower)
                .margin(10)
                .margin_right(20)
                .x_label_area_size(30)
                .y_label_area_size(80)
                .build_cartesian_2d(x_range, -0.5..lanes - 0.5),
        )?;
        drawing(
            lane_chart
                .configure_mesh()
                .x_label_formatter(&style::tick)
                .disable_x_mesh()
                .y_labels(LANES.len())
                .y_label_formatter(&|v| {
                    let i = (lanes - 1.0 - v).round();
                    if (i - (lanes - 1.0 - v)).abs() < 0.01 && i >= 0.0 {
                        LANES.get(i as usize).copied().unwrap_or("").to_string()
                    } else {
                        String::new()
                    }
                })
                .x_desc("events (hover for frame numbers)")
                .label_style((style::FONT, 12))
                .light_line_style(style::LIGHT_GREY.mix(0.4))
                .max_light_lines(2)
                .draw(),
        )?;
        let lane_y = |lane: usize| lanes - 1.0 - lane as f64;
        drawing(lane_chart.draw_series(marks.iter().map(|m| {
            let y = lane_y(m.lane);
            PathElement::new(
                vec![(m.time, y - 0.35), (m.time, y + 0.35)],
                m.colour.stroke_width(2),
            )
        })))?;
        for (t, text) in &asconf_labels {
            let (x, y) = lane_chart.backend_coord(&(*t, lane_y(0) + 0.3));
            drawing(root.draw(&Text::new(
                text.clone(),
                (x + 3, y),
                (style::FONT, 10).into_font(),
            )))?;
        }
        for m in &marks {
            let y = lane_y(m.lane);
            let (x, y0) = lane_chart.backend_coord(&(m.time, y - 0.4));
            let (_, y1) = lane_chart.backend_coord(&(m.time, y + 0.4));
            tips.rect((x - 3, y0), (x + 3, y1), &m.text);
        }
        drawing(root.present())?;
    }
    let mut csv = String::from("series,frame,time_s,tsn,relative_tsn,path\n");
    for (p, retransmitted) in dir
        .new_data
        .points
        .iter()
        .map(|p| (p, false))
        .chain(dir.retransmissions.points.iter().map(|p| (p, true)))
    {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{}",
            if retransmitted {
                "retransmitted"
            } else {
                "new"
            },
            p.frame,
            num(Some(seconds(p.time, origin))),
            p.tsn,
            relative(p.tsn, base),
            p.path
        );
    }
    for a in &dir.cumulative_acks.points {
        let _ = writeln!(
            csv,
            "cumulative_ack,{},{},{},{},",
            a.frame,
            num(Some(seconds(a.time, origin))),
            a.tsn,
            relative(a.tsn, base)
        );
    }
    let dropped = dir.new_data.dropped() + dir.retransmissions.dropped();
    let mut caption = format!(
        "{} new DATA chunks, {} retransmissions. Lanes below: ASCONF and ACKs, heartbeats, \
         path switches and T3 expiries, inferred path state, event-log anchors.",
        dir.new_data.seen, dir.retransmissions.seen
    );
    if dropped > 0 {
        let _ = write!(
            caption,
            " {dropped} chunks not drawn (evenly thinned to stay readable; the CSV has the drawn ones)."
        );
    }
    let svg = tips.finish(svg, &title);
    Ok(Some(Figure {
        name,
        title,
        caption,
        svg,
        csv,
    }))
}
