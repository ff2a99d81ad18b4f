//! The schema 1 JSON document: one document holding everything, built
//! after the analysis. Superseded by [`super::jsonl`] (schema 2, streamed);
//! kept while callers move over.

use crate::analysis::FileAnalysis;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Bumped on any incompatible change to the document's shape.
pub const SCHEMA_VERSION: u32 = 1;
pub const SCHEMA_NAME: &str = "sctp-handover/analysis";

#[derive(Serialize)]
#[serde(untagged)]
pub enum FileEntry<'a> {
    Analysed(&'a FileAnalysis),
    Failed { path: &'a Path, error: String },
}

#[derive(Serialize)]
pub struct Document<'a> {
    pub schema: &'static str,
    pub schema_version: u32,
    pub tool_version: &'static str,
    pub files: Vec<FileEntry<'a>>,
}

pub fn write(out: &mut dyn Write, files: Vec<FileEntry<'_>>) -> std::io::Result<()> {
    let doc = Document {
        schema: SCHEMA_NAME,
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION"),
        files,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
