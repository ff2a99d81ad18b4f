//! The report as a document: sections of text, figures and tables, and the
//! inputs left out with the reason. Rendered to HTML ([`crate::html`]) and
//! written out as assets (each figure as SVG + CSV, each table as CSV +
//! Markdown).

use crate::figures::svg::csv_field;
use crate::figures::Figure;
use anyhow::Context;
use std::fmt::Write;
use std::path::Path;

/// A table of text cells, shown in the page and written as CSV and
/// Markdown.
#[derive(Debug, Clone)]
pub struct Table {
    /// File stem in the assets folder, unique in the report.
    pub name: String,
    /// The caption shown above it.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// The cells, one `Vec` per row, as many as `header` has columns.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(name: impl Into<String>, title: impl Into<String>, header: &[&str]) -> Self {
        Table {
            name: name.into(),
            title: title.into(),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as CSV, header first (RFC 4180 quoting).
    pub fn csv(&self) -> String {
        let mut out = String::new();
        for line in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = line.iter().map(|c| csv_field(c)).collect();
            let _ = writeln!(out, "{}", cells.join(","));
        }
        out
    }

    /// The table as a Markdown pipe table under its bold title, markup
    /// characters escaped.
    pub fn markdown(&self) -> String {
        // Characters Markdown would read as markup are escaped.
        let cell = |c: &str| {
            let mut out = String::with_capacity(c.len());
            for ch in c.chars() {
                match ch {
                    '|' | '*' | '_' | '`' | '<' | '[' | ']' | '\\' => {
                        out.push('\\');
                        out.push(ch);
                    }
                    '\n' => out.push(' '),
                    ch => out.push(ch),
                }
            }
            out
        };
        let mut out = format!("**{}**\n\n", cell(&self.title));
        let _ = writeln!(
            out,
            "| {} |",
            self.header
                .iter()
                .map(|h| cell(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let _ = writeln!(out, "|{}", "---|".repeat(self.header.len()));
        for r in &self.rows {
            let _ = writeln!(
                out,
                "| {} |",
                r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out
    }
}

/// One piece of a section, in reading order.
#[derive(Debug, Clone)]
pub enum Block {
    /// A paragraph of plain text (escaped when rendered).
    Text(String),
    /// A figure (SVG with its data).
    Figure(Figure),
    /// A table.
    Table(Table),
}

/// A titled part of the report.
#[derive(Debug, Clone)]
pub struct Section {
    /// Anchor in the page.
    pub id: String,
    /// The heading.
    pub title: String,
    /// Its text, figures and tables, in order.
    pub blocks: Vec<Block>,
    /// Nested sections (a capture's associations).
    pub level: u8,
}

impl Section {
    /// An empty section.
    pub fn new(id: impl Into<String>, title: impl Into<String>, level: u8) -> Self {
        Section {
            id: id.into(),
            title: title.into(),
            blocks: Vec::new(),
            level,
        }
    }
    /// Appends a paragraph.
    pub fn text(&mut self, t: impl Into<String>) {
        self.blocks.push(Block::Text(t.into()));
    }
}

/// An input the report does not draw or count, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Excluded {
    /// The input as given (path or directory).
    pub input: String,
    /// Why it was left out.
    pub reason: String,
}

/// The whole report: title, summary lines, sections and exclusions.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// The page title.
    pub title: String,
    /// Lines under the title: what went in, how it was grouped.
    pub summary: Vec<String>,
    /// The sections, in page order.
    pub sections: Vec<Section>,
    /// Inputs left out, listed at the end of the page.
    pub excluded: Vec<Excluded>,
}

impl Document {
    /// Every figure of every section, in page order.
    pub fn figures(&self) -> impl Iterator<Item = &Figure> {
        self.sections.iter().flat_map(|s| {
            s.blocks.iter().filter_map(|b| match b {
                Block::Figure(f) => Some(f),
                _ => None,
            })
        })
    }

    /// Every table of every section, in page order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.sections.iter().flat_map(|s| {
            s.blocks.iter().filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
        })
    }

    /// The excluded inputs as a table (also written as an asset).
    pub fn excluded_table(&self) -> Table {
        let mut t = Table::new("excluded", "Inputs left out", &["input", "reason"]);
        for e in &self.excluded {
            t.row(vec![e.input.clone(), e.reason.clone()]);
        }
        t
    }

    /// Every figure as `NAME.svg` + `NAME.csv`, every table as `NAME.csv` +
    /// `NAME.md`, in `dir`.
    pub fn write_assets(&self, dir: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let write = |name: String, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))
        };
        for f in self.figures() {
            write(format!("{}.svg", f.name), &f.svg)?;
            write(format!("{}.csv", f.name), &f.csv)?;
        }
        for t in self
            .tables()
            .cloned()
            .chain(std::iter::once(self.excluded_table()))
        {
            write(format!("{}.csv", t.name), &t.csv())?;
            write(format!("{}.md", t.name), &t.markdown())?;
        }
        Ok(())
    }
}

/// A name usable as a file stem and an HTML id.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_table_formats() {
        assert_eq!(
            slug("sample-captures/koh-kim-1/mn.pcap"),
            "sample-captures-koh-kim-1-mn-pcap"
        );
        let mut t = Table::new("t", "A | B", &["group", "mean"]);
        t.row(vec!["a,b \"x\"".into(), "1.5".into()]);
        t.row(vec!["p|q".into(), String::new()]);
        assert_eq!(t.csv(), "group,mean\n\"a,b \"\"x\"\"\",1.5\np|q,\n");
        assert_eq!(
            t.markdown(),
            "**A \\| B**\n\n| group | mean |\n|---|---|\n| a,b \"x\" | 1.5 |\n| p\\|q |  |\n"
        );
    }
}
