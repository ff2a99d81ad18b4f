//! The document as Markdown (GitHub's dialect): text as paragraphs,
//! tables as pipe tables, figures as image links to their SVG in the
//! assets folder with a link to the CSV of their data.

use crate::document::{Block, Document};
use std::fmt::Write;

/// The document as Markdown; `assets` is the folder (relative to the
/// Markdown file) holding each figure's SVG and CSV.
pub fn render(doc: &Document, assets: &str) -> String {
    let mut out = format!("# {}\n\n", doc.title);
    for line in &doc.summary {
        let _ = writeln!(out, "{line}\n");
    }
    for s in &doc.sections {
        let hashes = "#".repeat(usize::from(s.level.clamp(2, 4)));
        let _ = writeln!(out, "{hashes} {}\n", s.title);
        for b in &s.blocks {
            match b {
                Block::Text(t) => {
                    let _ = writeln!(out, "{t}\n");
                }
                Block::Table(t) => {
                    let _ = writeln!(out, "{}", t.markdown());
                }
                Block::Figure(f) => {
                    let _ = writeln!(
                        out,
                        "![{}]({assets}/{}.svg)\n\n*{}* — {} Data: [{}.csv]({assets}/{}.csv).\n",
                        f.title, f.name, f.title, f.caption, f.name, f.name
                    );
                }
            }
        }
    }
    if !doc.excluded.is_empty() {
        let _ = writeln!(
            out,
            "## Inputs left out\n\n{}",
            doc.excluded_table().markdown()
        );
    }
    out
}
