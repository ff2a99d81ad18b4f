//! Column-major row buffers that follow a [`Table`] definition. Row
//! builders push one value per column in definition order; the writer
//! turns the buffers into a polars `DataFrame`.

use crate::schema::{Col, Table, Ty};

/// One column's values. Times are epoch nanoseconds.
#[derive(Debug, Clone)]
pub enum Values {
    U64(Vec<Option<u64>>),
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Str(Vec<Option<String>>),
    Bool(Vec<Option<bool>>),
    Time(Vec<Option<i64>>),
}

impl Values {
    fn new(ty: Ty) -> Self {
        match ty {
            Ty::U64 => Values::U64(Vec::new()),
            Ty::I64 => Values::I64(Vec::new()),
            Ty::F64 => Values::F64(Vec::new()),
            Ty::Str => Values::Str(Vec::new()),
            Ty::Bool => Values::Bool(Vec::new()),
            Ty::Time => Values::Time(Vec::new()),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Values::U64(v) => v.len(),
            Values::I64(v) | Values::Time(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Str(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn clear(&mut self) {
        match self {
            Values::U64(v) => v.clear(),
            Values::I64(v) | Values::Time(v) => v.clear(),
            Values::F64(v) => v.clear(),
            Values::Str(v) => v.clear(),
            Values::Bool(v) => v.clear(),
        }
    }
}

/// Rows of one table, built a row at a time.
pub struct Rows {
    pub columns: &'static [Col],
    pub values: Vec<Values>,
    cursor: usize,
    /// Bytes of one row's values, and of the text of every row's strings.
    row_bytes: usize,
    text_bytes: usize,
}

/// Bytes one value of the type takes in its column buffer.
fn value_bytes(ty: Ty) -> usize {
    match ty {
        Ty::U64 => std::mem::size_of::<Option<u64>>(),
        Ty::I64 | Ty::Time => std::mem::size_of::<Option<i64>>(),
        Ty::F64 => std::mem::size_of::<Option<f64>>(),
        Ty::Str => std::mem::size_of::<Option<String>>(),
        Ty::Bool => std::mem::size_of::<Option<bool>>(),
    }
}

impl Rows {
    pub fn new(table: &Table) -> Self {
        Rows {
            columns: table.columns,
            values: table.columns.iter().map(|c| Values::new(c.ty)).collect(),
            cursor: 0,
            row_bytes: table.columns.iter().map(|c| value_bytes(c.ty)).sum(),
            text_bytes: 0,
        }
    }

    /// Bytes the buffered rows hold (what decides when a batch is written).
    pub fn bytes(&self) -> usize {
        self.len() * self.row_bytes + self.text_bytes
    }

    pub fn len(&self) -> usize {
        self.values.first().map_or(0, Values::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&mut self) {
        self.values.iter_mut().for_each(Values::clear);
        self.cursor = 0;
        self.text_bytes = 0;
    }

    fn slot(&mut self) -> &mut Values {
        let i = self.cursor;
        self.cursor += 1;
        // A builder pushing more values than the table has columns is a
        // bug in this crate, never a property of the input.
        &mut self.values[i]
    }

    fn mismatch(&self, wanted: &str) -> ! {
        let c = &self.columns[self.cursor - 1];
        panic!(
            "row builder pushed {wanted} into column {} of type {}",
            c.name,
            c.ty.name()
        )
    }

    pub fn u64(&mut self, v: impl Into<Option<u64>>) -> &mut Self {
        match self.slot() {
            Values::U64(c) => c.push(v.into()),
            _ => self.mismatch("u64"),
        }
        self
    }

    pub fn f64(&mut self, v: impl Into<Option<f64>>) -> &mut Self {
        match self.slot() {
            Values::F64(c) => c.push(v.into()),
            _ => self.mismatch("f64"),
        }
        self
    }

    pub fn str(&mut self, v: Option<impl Into<String>>) -> &mut Self {
        let v: Option<String> = v.map(Into::into);
        let len = v.as_ref().map_or(0, String::len);
        match self.slot() {
            Values::Str(c) => c.push(v),
            _ => self.mismatch("str"),
        }
        self.text_bytes += len;
        self
    }

    pub fn text(&mut self, v: impl Into<String>) -> &mut Self {
        self.str(Some(v))
    }

    pub fn bool(&mut self, v: impl Into<Option<bool>>) -> &mut Self {
        match self.slot() {
            Values::Bool(c) => c.push(v.into()),
            _ => self.mismatch("bool"),
        }
        self
    }

    /// Epoch nanoseconds.
    pub fn time(&mut self, v: Option<i64>) -> &mut Self {
        match self.slot() {
            Values::Time(c) => c.push(v),
            _ => self.mismatch("time"),
        }
        self
    }

    /// Ends a row; every column must have had its value.
    pub fn end(&mut self) {
        assert_eq!(
            self.cursor,
            self.columns.len(),
            "row builder pushed {} values for {} columns",
            self.cursor,
            self.columns.len()
        );
        self.cursor = 0;
    }
}
