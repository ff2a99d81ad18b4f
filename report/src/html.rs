//! The document as one HTML file that opens offline: inline CSS, inline
//! SVG, no script, no font and no URL fetched from anywhere.

use crate::document::{Block, Document, Table};
use crate::figures::svg::escape;
use std::fmt::Write;

const CSS: &str = "
body { font-family: sans-serif; margin: 0 auto; max-width: 1000px; padding: 1em 1.5em;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #0072B2; padding-bottom: 0.15em; margin-top: 2em; }
h3 { margin-top: 1.6em; }
nav ol { columns: 2; font-size: 0.92em; }
figure { margin: 1.2em 0; }
figure svg { max-width: 100%; height: auto; display: block; border: 1px solid #ddd; }
figcaption { font-size: 0.9em; color: #444; margin-top: 0.3em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.88em; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; vertical-align: top; }
th { background: #f0f4f8; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.table-wrap { overflow-x: auto; }
.summary { color: #444; }
.tips circle:hover, .tips rect:hover { fill-opacity: 0.15; }
";

fn numeric(cell: &str) -> bool {
    !cell.is_empty() && cell.parse::<f64>().is_ok()
}

fn table(out: &mut String, t: &Table) {
    let _ = write!(
        out,
        "<div class=\"table-wrap\"><table id=\"table-{}\"><caption>{}</caption><thead><tr>",
        escape(&t.name),
        escape(&t.title)
    );
    for h in &t.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        out.push_str("<tr>");
        for c in r {
            if numeric(c) {
                let _ = write!(out, "<td class=\"num\">{}</td>", escape(c));
            } else {
                let _ = write!(out, "<td>{}</td>", escape(c));
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>\n");
}

/// Plotters writes an XML declaration-free `<svg>` root; it is inlined as
/// is (an id per figure lets tests and readers find it).
fn figure(out: &mut String, f: &crate::figures::Figure) {
    let _ = writeln!(
        out,
        "<figure id=\"figure-{}\" data-name=\"{}\">{}<figcaption><b>{}</b> — {}</figcaption></figure>",
        escape(&f.name),
        escape(&f.name),
        f.svg.trim_start_matches(|c: char| c != '<'),
        escape(&f.title),
        escape(&f.caption)
    );
}

/// The document as one self-contained HTML page (figures inline).
pub fn render(doc: &Document) -> String {
    let mut out = String::with_capacity(1 << 20);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{}</style></head><body>\n<h1>{}</h1>\n",
        escape(&doc.title),
        CSS,
        escape(&doc.title)
    );
    for line in &doc.summary {
        let _ = writeln!(out, "<p class=\"summary\">{}</p>", escape(line));
    }
    out.push_str("<nav><ol>");
    for s in doc.sections.iter().filter(|s| s.level <= 2) {
        let _ = write!(
            out,
            "<li><a href=\"#{}\">{}</a></li>",
            escape(&s.id),
            escape(&s.title)
        );
    }
    out.push_str("<li><a href=\"#excluded\">Inputs left out</a></li></ol></nav>\n");
    for s in &doc.sections {
        let h = s.level.clamp(2, 4);
        let _ = writeln!(
            out,
            "<section id=\"{}\"><h{h}>{}</h{h}>",
            escape(&s.id),
            escape(&s.title)
        );
        for b in &s.blocks {
            match b {
                Block::Text(t) => {
                    let _ = writeln!(out, "<p>{}</p>", escape(t));
                }
                Block::Figure(f) => figure(&mut out, f),
                Block::Table(t) => table(&mut out, t),
            }
        }
        out.push_str("</section>\n");
    }
    out.push_str("<section id=\"excluded\"><h2>Inputs left out</h2>");
    if doc.excluded.is_empty() {
        out.push_str("<p>None: every input is in the report.</p>");
    } else {
        table(&mut out, &doc.excluded_table());
    }
    out.push_str("</section>\n");
    let _ = writeln!(
        out,
        "<footer><p class=\"summary\">Made by sctp-handover {} report. Definitions: \
         docs/metrics.md of the project.</p></footer></body></html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}
